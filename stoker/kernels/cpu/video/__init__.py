"""CPU kernels of the video family (``stoker/operators/video/``): PyAV decoding of chosen
frames."""
