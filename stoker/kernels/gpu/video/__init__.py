"""GPU kernels of the video family (``stoker/operators/video/``): NVDEC decoding through
PyAV, NV12 to RGB on the device."""
