"""CPU kernels of the image family (``stoker/operators/image/``): numpy, numba, OpenCV and
libjpeg-turbo functions on plain arrays.

Decoding: ``decode`` (``decode_header``, ``decode_png``, ``turbojpeg`` and
``turbojpeg_loop``: libjpeg-turbo through ctypes and compiled calls). Windows and crops:
``crop``, ``crop_window`` (``crop_window_loop``: the random crop windows), ``fused``
(crop + mirror + normalize in one pass). Resampling: ``resize_geometry`` (DALI's size
rules and filters), ``resize`` (the separable passes; ``resample_loops``,
``transpose_loops``), ``resize_normalize`` (the last pass writes crop_mirror_normalize's
output), ``decode_resize_loop`` (decode -> resize -> normalize in one compiled call).
Warps: ``affine`` (``points_loop``: coord_transform's points), ``warp`` (``warp_loops``;
``sample_loops`` samples for it and for ``remap_loops``).
Pixels: ``color``, ``lut``, ``mask``, ``noise``, ``blur``, ``distort``, ``paste``
(``pixel_loops``: their compiled loops).
"""
