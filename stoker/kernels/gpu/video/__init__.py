"""GPU video kernels: NVDEC decoding through PyAV, NV12 to RGB on the device."""
