"""Video operators (none yet).

Operators: none yet.

Here go the video readers and decoders (readers.video, decoders.video,
experimental.inputs.video), with their kernels in ``stoker/kernels/cpu/video/`` (PyAV /
FFmpeg) and ``stoker/kernels/gpu/video/`` (NVDEC), and their tests in ``tests/video/``.
"""
