"""Detection and segmentation kernels: boxes, crops around them, anchors, masks."""
