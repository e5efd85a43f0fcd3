"""CPU kernels of the detection family (``stoker/operators/detection/``): box arithmetic,
the random_bbox_crop search, SSD's anchor matching and the blob labelling of the
segmentation operators (compiled ``*_loop`` modules, imported on first use).
"""
