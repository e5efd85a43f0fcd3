"""Video operators: the video readers (CPU, and GPU through NVDEC), decoders.video,
experimental.inputs.video, and the sequence operators.

Operators: fn.readers.video, fn.experimental.readers.video, fn.readers.video_resize,
fn.decoders.video, fn.experimental.inputs.video, fn.sequence_rearrange, fn.per_frame,
fn.element_extract.

Hidden (the device='gpu' readers are a CPU window source plus a mixed decoder):
_readers.video.windows, _experimental.readers.video.windows, _readers.video_resize.windows,
_video_decode_windows.

Modules: ``readers`` (readers.video, experimental.readers.video, readers.video_resize),
``gpu_readers`` (the device='gpu' readers: windows chosen on the CPU, decoded by NVDEC),
``reader_source`` (their source instance, on the readers' shared machinery),
``decoders`` (decoders.video), ``inputs`` (experimental.inputs.video), ``sequence``
(sequence_rearrange, per_frame, element_extract). Kernels: ``stoker/kernels/cpu/video/``
(PyAV) and ``stoker/kernels/gpu/video/`` (NVDEC); the video index and dataset are
``stoker/readers/video_*.py``; tests: ``tests/video/``.
"""
