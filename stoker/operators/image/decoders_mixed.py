"""``device="mixed"`` for the image decoders: the batch in, HWC tensors on the device out.

For each sample the header is read and the window resolved exactly as the CPU kernel does
(the same ``roi`` function, the same per-sample random generator), on the pipeline's
threads. JPEGs that the GPU library covers (8-bit output in RGB, BGR or GRAY, no EXIF
rotation to apply, not CMYK) are then decoded in one batch on the GPU
(``kernels/gpu/image/jpeg.py``). Everything else, and every sample when the tensors are on the
CPU (``STOKER_GPU_ON_CPU=1``) or no GPU library is installed, is decoded by the CPU kernel
itself on the pipeline's threads and uploaded: so on that path a mixed decoder's output
equals the CPU decoder's exactly, and its errors are the CPU decoder's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import SampleError
from stoker.executor.context import SampleFailure
from stoker.kernels.cpu.image import decode as K

_GPU_TYPES = (types.RGB, types.BGR, types.GRAY)


def mixed_kernel(cpu_kernel: Callable, roi: Callable | None) -> Callable:
    """The gpu_kernel of a decoder whose CPU kernel is ``cpu_kernel`` and whose window is
    ``roi(ins, args, ctx, h, w)`` (None: the whole image)."""
    def kernel(ins: list, args: dict, ctx: Any) -> list:
        return decode_batch(cpu_kernel, roi, ins, args, ctx)
    return kernel


def _sample_args(args: dict, j: int) -> dict:
    keys = args.get("_per_sample", ())
    return args if not keys else {**args, **{k: args[k][j] for k in keys}}


def _gpu_may_decode(args: dict) -> bool:
    return types.to_numpy(args["dtype"]) == np.uint8 and \
        types.DALIImageType(args["output_type"]) in _GPU_TYPES


def decode_batch(cpu_kernel: Callable, roi: Callable | None, ins: list, args: dict,
                 ctx: Any) -> list:
    from stoker.kernels.gpu.common import upload_batch
    from stoker.kernels.gpu.image import jpeg

    n = ctx.n

    def sample(j: int) -> tuple[list, dict, Any]:
        return [x[j] for x in ins], _sample_args(args, j), ctx.sample(j)

    def on_cpu(j: int) -> np.ndarray:
        try:
            return cpu_kernel(*sample(j))
        except SampleError:
            raise
        except Exception as e:
            raise SampleFailure(j, e) from e

    backend = jpeg.backend_for(ctx.device) if _gpu_may_decode(args) else "cpu"
    if backend == "cpu":
        return upload_batch(ctx.map(on_cpu, n), ctx.device)

    def window(j: int) -> tuple | None:
        """(window,) for a JPEG the GPU decodes, None for one the CPU decodes."""
        s_ins, s_args, sctx = sample(j)
        data = s_ins[0]
        if bytes(np.asarray(data[:3]).view(np.uint8)) != b"\xff\xd8\xff":
            return None
        try:
            info = K.probe(data)
        except Exception:
            return None  # the CPU kernel raises the error that names the file
        orient = s_args["adjust_orientation"]
        if info.colorspace in ("CMYK", "YCCK") or (orient and info.orientation != 1) or \
                info.height * info.width > K.MAX_PIXELS:
            return None
        h, w = info.shape(orient)
        try:
            return (roi(s_ins, s_args, sctx, h, w) if roi is not None else None,)
        except Exception as e:
            raise SampleFailure(j, e) from e

    plans = ctx.map(window, n)
    out: list[Any] = [None] * n
    on_gpu = [j for j in range(n) if plans[j] is not None]
    if on_gpu:
        datas = [ins[0][j] for j in on_gpu]
        windows = [plans[j][0] for j in on_gpu]
        kind = types.DALIImageType(args["output_type"])
        gray = kind == types.GRAY
        options = {"hw_decoder_load": args["hw_decoder_load"],
                   "fancy_upsampling": args["jpeg_fancy_upsampling"]}
        if backend is None:  # first batch: measure the installed libraries
            backend, images = jpeg.choose(ctx.device, datas, windows, gray, options)
        else:
            try:
                images = jpeg.decode(backend, ctx.device, datas, windows, gray, options)
            except Exception:  # e.g. a corrupt JPEG: the CPU kernel names it
                images = []
        if len(images) != len(on_gpu):
            images = [None] * len(on_gpu)
        for j, img in zip(on_gpu, images, strict=True):
            if img is not None and kind == types.BGR:
                img = img.flip(-1)
            out[j] = img
    rest = [j for j in range(n) if out[j] is None]
    if rest:
        decoded = upload_batch(ctx.map(lambda k: on_cpu(rest[k]), len(rest)), ctx.device)
        for j, t in zip(rest, decoded, strict=True):
            out[j] = t
    return out
