"""Image operators: decoders, crops, resampling and its fusion, warps, color, filters, noise.

Operators: fn.decoders.image, fn.decoders.image_crop, fn.decoders.image_random_crop,
fn.decoders.image_slice, fn.peek_image_shape, fn.crop, fn.flip, fn.crop_mirror_normalize,
fn.resize, fn.resize_crop_mirror, fn.random_resized_crop, fn.warp_affine, fn.rotate,
fn.transforms.translation, fn.transforms.scale, fn.transforms.rotation,
fn.transforms.shear, fn.transforms.crop, fn.transforms.combine, fn.coord_transform,
fn.coord_flip, fn.paste, fn.brightness, fn.contrast, fn.brightness_contrast, fn.hue,
fn.saturation, fn.hsv, fn.color_twist, fn.color_space_conversion, fn.gaussian_blur,
fn.jpeg_compression_distortion, fn.noise.gaussian, fn.noise.salt_and_pepper,
fn.noise.shot, fn.erase, fn.grid_mask, fn.equalize, fn.lookup_table, fn.filter,
fn.laplacian, fn.water, fn.sphere, fn.experimental.warp_perspective, fn.dump_image,
fn.debayer, fn.clahe, fn.tensor_resize.

Hidden (the fusion rules put them in place of chains): _decode_resize, _resize_normalize.

Modules: ``decoders`` (``decoders_mixed``: device="mixed"), ``geometry`` (crop, flip;
``crop_planes`` cuts images, sequences and volumes), ``crop_mirror_normalize``, ``resize``,
``tensor_resize``, ``warp``, ``warp_perspective``, ``transforms`` (affine matrices and
coordinates), ``paste``, ``color``, ``filters``, ``convolution`` (filter, laplacian),
``effects`` (water, sphere), ``debug`` (dump_image), ``debayer``, ``clahe``, ``noise``,
``erase`` (erase, grid_mask), ``lut`` (equalize, lookup_table); ``fusion`` (the rewrite
rules for image chains) and the operators they make (``resize_fused``,
``decode_resize``); ``image_args`` (glue the pixel operators share). CPU kernels:
``stoker/kernels/cpu/image/``; GPU kernels: ``stoker/kernels/gpu/image/``; tests:
``tests/image/``.
"""
