"""DALI's automatic augmentations (``nvidia.dali.auto_aug``): AutoAugment, RandAugment and
TrivialAugment over a suite of image augmentations, for uint8 HWC images (FHWC videos).

    from stoker.auto_aug import auto_augment, rand_augment, trivial_augment

    @pipeline_def(enable_conditionals=True)
    def train():
        images = fn.decoders.image(jpegs)
        images = trivial_augment.trivial_augment_wide(images)

Modules: ``core`` (the ``@augmentation`` decorator, ``Augmentation``, ``signed_bin``,
``select``, ``Policy``), ``augmentations`` (the suite: shear, translate, rotate,
brightness, contrast, color, sharpness, posterize, solarize, solarize_add, invert,
equalize, auto_contrast, identity), ``auto_augment``, ``rand_augment``, ``trivial_augment``.
Each sample takes its own augmentation through conditionals (``select`` splits the batch
by a per-sample index), so the pipeline needs ``enable_conditionals=True``, as in DALI.
Random choices come from stoker's random streams: same distributions as DALI, other draws.
"""

from stoker.auto_aug import augmentations, auto_augment, core, rand_augment, trivial_augment

__all__ = ["augmentations", "auto_augment", "core", "rand_augment", "trivial_augment"]
