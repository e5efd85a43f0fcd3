"""``fn.decoders.numpy``: arrays from the bytes of ``.npy`` files given as data.

Each sample is a file's bytes (uint8, 1-D, e.g. from fn.io.file.read or a webdataset
shard); the output is the array it holds, C order, with the header's type and shape.
With 'dtype' the arrays are converted to that type (floats to integers rounded and
saturated). DALI 2.4 facts, measured: a batch whose arrays differ in type is refused
unless 'dtype' is given, one whose arrays differ in dimensions always; big-endian and
truncated files are refused; the output has no layout. Fortran-order files are decoded
(DALI's CPU operator fails on them without a GPU). Bytes on memory the pipeline owns
(``kernels/cpu/buffers.py``: an external_source's copy of large samples) are not copied
again: C-ordered, aligned arrays are handed out as views of them. The header parsing is
``stoker/readers/npy.py`` (shared with fn.readers.numpy).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from stoker import types
from stoker.kernels.cpu import buffers
from stoker.kernels.cpu.saturate import round_sat
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import Arg, Example, Input, OpSchema
from stoker.operators.machinery.tensor_util import batch_stage
from stoker.readers.npy import MAGIC, NpyError, parse_header


def npy_view(data: Any, where: str) -> np.ndarray:
    """The array a sample's .npy bytes hold, as a view of those bytes (read-only use)."""
    raw = np.asarray(data)
    if raw.ndim != 1 or raw.dtype.itemsize != 1 or raw.dtype.kind not in "iub":
        raise TypeError(f"{where}: expects the bytes of a .npy file as a 1-D uint8 array, "
                        f"got a {raw.ndim}-D {raw.dtype.name} array")
    raw = np.ascontiguousarray(raw).view(np.uint8)
    head = raw[:4096].tobytes()
    if len(head) >= 12 and head.startswith(MAGIC):  # a header longer than 4 KiB: all of it
        length = int.from_bytes(head[8:10] if head[6] == 1 else head[8:12], "little")
        head = raw[:12 + length].tobytes()
    header = parse_header(head, where)
    if header.dtype.byteorder == ">":
        raise NpyError(f"{where}: big-endian arrays are not supported (as in DALI)")
    end = header.offset + header.nbytes
    if raw.size != end:
        raise NpyError(f"{where}: the header announces {header.nbytes} bytes of data, the "
                       f"sample holds {raw.size - header.offset}")
    order = "F" if header.fortran else "C"
    return np.ndarray(header.shape, header.dtype, buffer=raw, offset=header.offset,
                      order=order)


def decode_npy(data: Any, where: str) -> np.ndarray:
    """The array a sample's .npy bytes hold, C order, in memory of its own."""
    return npy_view(data, where).copy(order="C")  # 0-d stays 0-d (unlike ascontiguousarray)


def _run(ins: list, args: dict, argv: dict, n: int) -> list:
    samples = ins[0]
    out = [npy_view(samples[j], f"sample {j}") for j in range(n)]
    dims = {a.ndim for a in out}
    if len(dims) > 1:
        raise ValueError(f"the arrays of a batch must have the same number of dimensions, "
                         f"got {', '.join(str(d) for d in sorted(dims))}")
    if args.get("dtype") is not None:
        want = types.to_numpy(args["dtype"])
        return [round_sat(a, want) if a.dtype.kind == "f" and want.kind in "iu" else
                a.astype(want) for a in out]
    kinds = {a.dtype for a in out}
    if len(kinds) > 1:
        raise ValueError(f"the arrays of a batch must share one type (or give 'dtype'), got "
                         f"{', '.join(sorted(k.name for k in kinds))}")
    if n and all(buffers.recycled(np.asarray(ins[0][j])) and a.flags.c_contiguous and
                 a.flags.aligned for j, a in enumerate(out)):
        # The bytes are memory the pipeline owns (an external_source copy, a decoded
        # batch) that nothing rewrites while a view of it lives: the arrays are views of
        # them, no copy (DALI copies; the values are the same).
        return out
    if n and len({a.shape for a in out}) == 1:  # one dense batch, each array copied once
        # On recycled memory: a fresh batch-sized array faults its pages in, zeroed, every
        # batch (as long as the copy itself).
        dense = buffers.empty((n, *out[0].shape), out[0].dtype)
        for j, a in enumerate(out):
            dense[j] = a
        return dense
    return [a.copy(order="C") for a in out]


def _npy(a: np.ndarray) -> np.ndarray:
    buf = io.BytesIO()
    np.save(buf, a)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


_I16 = [_npy(np.arange(12, dtype=np.int16).reshape(3, 4)),
        _npy(np.arange(5, dtype=np.int16).reshape(1, 5))]

register(OpSchema(
    name="decoders.numpy",
    doc="Decodes .npy files given as bytes into the arrays they hold.",
    inputs=(Input("data", "The bytes of one .npy file per sample (1-D uint8)."),),
    args=(Arg("dtype", "dtype", None, "Convert the arrays to this type (default: keep the "
              "file's; then all samples must share one)."),),
    stage="batch", instance=batch_stage(_run),
    layout=lambda layouts, a: "",
    dtype=lambda d, a: types.to_numpy(a["dtype"]) if a.get("dtype") is not None else None,
    examples=(
        Example(inputs=(_I16,)),
        Example(args={"dtype": types.FLOAT},
                inputs=([_npy(np.asfortranarray(np.ones((2, 3), np.float64))), _I16[0]],)),
        Example(inputs=([_I16[0], _npy(np.ones((1, 3), np.float32))],), raises=RuntimeError,
                match="must share one type"),
        Example(inputs=(_I16[:1] + [_npy(np.ones(3, np.int16))],), raises=RuntimeError,
                match="same number of dimensions"),
        Example(inputs=([_I16[0][:-4]],), raises=RuntimeError,
                match="the header announces 24 bytes"),
        Example(inputs=([np.frombuffer(b"hello world", np.uint8).copy()],),
                raises=RuntimeError, match="is not a .npy file"),
    ),
))
