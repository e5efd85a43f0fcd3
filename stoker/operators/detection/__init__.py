"""Detection operators: bounding boxes, crop windows that keep them, SSD's anchor
matching, and segmentation masks.

Operators: fn.random_bbox_crop, fn.bb_flip, fn.bbox_paste, fn.bbox_rotate, fn.box_encoder,
fn.segmentation.random_object_bbox, fn.segmentation.random_mask_pixel,
fn.segmentation.select_masks, fn.roi_random_crop, fn.multi_paste.

Modules: ``bbox_crop`` (random_bbox_crop), ``bbox`` (bb_flip, bbox_paste, bbox_rotate,
box_encoder), ``segmentation`` (the three segmentation operators), ``roi_crop``
(roi_random_crop), ``multi_paste``. Kernels: ``stoker/kernels/cpu/detection/``; tests:
``tests/detection/``. The COCO reader that feeds them is ``readers/coco.py``.
"""
