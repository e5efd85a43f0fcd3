"""The detection family: bounding boxes, crops that keep them, anchors, and masks.

    bbox_crop      -- fn.random_bbox_crop
    bbox           -- fn.bb_flip, fn.bbox_paste, fn.bbox_rotate, fn.box_encoder
    segmentation   -- fn.segmentation.random_object_bbox, random_mask_pixel, select_masks
    roi_crop       -- fn.roi_random_crop
    multi_paste    -- fn.multi_paste

Importing the package registers every operator of the family.
"""

from stoker.operators.detection import (  # noqa: F401
    bbox,
    bbox_crop,
    multi_paste,
    roi_crop,
    segmentation,
)
