"""Video operators: the video readers, decoders.video, experimental.inputs.video, and the
sequence operators (sequence_rearrange, per_frame, element_extract)."""

from stoker.operators.video import readers  # noqa: F401  (registers the schemas)
