"""Video operators: the video readers (CPU, and GPU through NVDEC), decoders.video,
experimental.inputs.video, and the sequence operators (sequence_rearrange, per_frame,
element_extract)."""

from stoker.operators.video import (  # noqa: F401  (each registers its schemas)
    decoders,
    gpu_readers,
    inputs,
    readers,
    sequence,
)
