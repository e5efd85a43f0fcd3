"""CPU kernels of the audio family (``stoker/operators/audio/``): none yet."""
