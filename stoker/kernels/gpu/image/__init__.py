"""GPU kernels of the image family (``stoker/operators/image/``), on torch tensors.

``geometry`` (crop, flip, crop_mirror_normalize), ``resize`` (resize, resize_crop_mirror,
random_resized_crop), ``color`` (the color operators), ``jpeg`` (the mixed decoders' GPU
JPEG decode: nvImageCodec or torchvision's nvJPEG).
"""
