"""Detection operators: bounding boxes and their augmentations (none yet).

Operators: none yet.

Here go bb_flip, bbox_paste, random_bbox_crop, box_encoder and the box handling of the COCO
reader's outputs, with their kernels in ``stoker/kernels/cpu/detection/`` (and
``stoker/kernels/gpu/detection/``) and their tests in ``tests/detection/``.
"""
