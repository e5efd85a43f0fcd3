"""The cases of tests/data/dali_arg_forms.json, built and run with DALI or with stoker.

One case is one operator call with one argument given in one value form (an int, a numpy
scalar, a tuple, a per-sample DataNode, ...). The recorder (tests/data/record/arg_forms.py,
run with DALI 2.4) and the replay test (tests/test_arg_forms_vs_dali.py, run with stoker)
both build the case here, from the library they are handed (its ``fn``, ``types`` and
``Pipeline``), so a case means the same call on both sides. Outcomes are "ok" or
"<stage>:<builtin exception name>", the stage being where it failed: "call" (making the
value, the ``fn`` call, ``set_outputs``), "build" or "run" (one iteration).
"""

from __future__ import annotations

import base64
import builtins
import pathlib
from typing import Any

import numpy as np
from dali_cases import Lib  # noqa: F401  (the recorder and the test take it from here)

# Every form, in the order outcomes are stored. "natural" is the value as users write it
# (an enum member, a string, a list for vector arguments): the control case.
FORMS = ("natural", "none", "bool", "int", "float", "np_int", "np_float", "np_0d", "list",
         "tuple", "np_1d", "const", "const_0d", "node", "node_other")
STAGES = ("call", "build", "run")
SEED = 7

# DALI's argument type -> the kind of value it holds.
KINDS = {
    "INT32": "int", "INT64": "int", "UINT8": "int", "UINT32": "int",
    "FLOAT": "float", "BOOL": "bool", "STRING": "str", "TENSOR_LAYOUT": "str",
    "_INT32_VEC": "ints", "_INT64_VEC": "ints", "_FLOAT_VEC": "floats", "_STRING_VEC": "strs",
    "DATA_TYPE": "DALIDataType", "IMAGE_TYPE": "DALIImageType", "INTERP_TYPE": "DALIInterpType",
}
ENUMS = ("DALIDataType", "DALIImageType", "DALIInterpType")
# The numpy dtype a value of each kind has as an array (a per-sample DataNode, np_0d, np_1d),
# and the other dtype a user's DataNode often has instead (node_other).
_NP = {"int": np.int32, "ints": np.int32, "float": np.float32, "floats": np.float32,
       "bool": np.bool_, **{e: np.int32 for e in ENUMS}}
_NP_OTHER = {"int": np.float32, "ints": np.float32, "float": np.int32, "floats": np.int32,
             "bool": np.int32, **{e: np.float32 for e in ENUMS}}


def decode(value: Any, types: Any) -> Any:
    """A stored value: plain JSON, except enums, stored as {"enum": class name, "v": int}."""
    if isinstance(value, dict) and "enum" in value:
        return getattr(types, value["enum"])(value["v"])
    if isinstance(value, list):
        return [decode(v, types) for v in value]
    return value


def _element(base: Any, kind: str) -> Any:
    """The scalar a form is made of: the value itself, or a vector's first element."""
    if isinstance(base, list):
        if base:
            return base[0]
        return {"ints": 0, "floats": 0.0, "strs": ""}[kind]
    return base


def _number(x: Any) -> float | int | bool:
    return int(x) if isinstance(x, dict) else x  # an encoded enum counts as its int


def _as_list(base: Any) -> list:
    return list(base) if isinstance(base, list) else [base]


def _whole(x: Any) -> int:
    """The nearest integer, away from 0 where rounding would give 0 (0.5 -> 1), so that a
    non-zero value stays non-zero (an area fraction of 0 is another case)."""
    n = int(round(x))
    return n if n or not x else (1 if x > 0 else -1)


def form_value(form: str, base: Any, kind: str, lib: Lib, batch: int) -> Any:
    """The argument value ``base`` (stored, plausible) given in ``form``."""
    t = lib.types
    s = _element(base, kind)
    text = kind in ("str", "strs")
    num = None if text else (s["v"] if isinstance(s, dict) else s)
    np_type = _NP.get(kind)
    if form == "natural":
        return decode(base, t)
    if form == "none":
        return None
    if form == "bool":
        return True if text else bool(num)
    if form == "int":
        return 1 if text else _whole(num)
    if form == "float":
        return 1.0 if text else float(num)
    if form == "np_int":
        return np.int64(1 if text else _whole(num))
    if form == "np_float":
        return np.float32(1.0 if text else num)
    if form == "np_0d":
        return np.array(s) if text else np.array(num, np_type)
    if form in ("list", "tuple"):
        items = decode(_as_list(base), t)
        return items if form == "list" else tuple(items)
    if form == "np_1d":
        items = _as_list(base)
        if text:
            return np.array(items)
        return np.array([x["v"] if isinstance(x, dict) else x for x in items], np_type)
    if form == "const":
        return t.Constant(decode(s, t))
    if form == "const_0d":
        return t.Constant(np.array(s) if text else np.array(num, np_type))
    if form in ("node", "node_other"):
        if text:  # a string per sample, as bytes
            arr = np.frombuffer(str(s).encode(), np.uint8).copy()
        else:
            dtype = (np_type if form == "node" else _NP_OTHER[kind])
            values = [x["v"] if isinstance(x, dict) else x for x in _as_list(base)]
            values = values if kind in ("ints", "floats") else [num]
            if np.dtype(dtype).kind in "iu":  # whole numbers, none rounded to 0
                values = [_whole(v) for v in values]
            arr = np.array(values if kind in ("ints", "floats") else values[0], dtype)
        return lib.fn.external_source(source=_returning([arr] * batch), batch=True)
    raise ValueError(f"unknown form {form!r}")


def input_arrays(spec: dict) -> list[np.ndarray]:
    """One input's samples, stored as raw bytes with dtype and shapes."""
    raw = base64.b64decode(spec["b64"])
    dtype = np.dtype(spec["dtype"])
    out, at = [], 0
    for shape in spec["shapes"]:
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        out.append(np.frombuffer(raw[at:at + n], dtype).reshape(shape).copy())
        at += n
    return out


def encode_inputs(samples: list[np.ndarray], layout: str | None) -> dict:
    arrays = [np.ascontiguousarray(s) for s in samples]
    return {"dtype": str(arrays[0].dtype), "shapes": [list(a.shape) for a in arrays],
            "layout": layout,
            "b64": base64.b64encode(b"".join(a.tobytes() for a in arrays)).decode()}


def make_files(root: pathlib.Path, jpeg: bytes) -> None:
    """The file tree readers.file cases read: two classes of one image each, and a list;
    and a NeMo manifest of one short 16-bit WAV (readers.nemo_asr)."""
    import json
    import struct

    for label, cls in enumerate(("a", "b")):
        (root / cls).mkdir(parents=True, exist_ok=True)
        (root / cls / f"{label}.jpg").write_bytes(jpeg)
    (root / "list.txt").write_text("a/0.jpg 0\nb/1.jpg 1\n")
    samples = (np.sin(np.arange(400) / 5) * 8000).astype("<i2").tobytes()
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(samples), b"WAVE", b"fmt ",
                         16, 1, 1, 8000, 16000, 2, 16, b"data", len(samples))
    (root / "a.wav").write_bytes(header + samples)
    (root / "manifest.json").write_text(json.dumps(
        {"audio_filepath": str(root / "a.wav"), "duration": 0.05, "text": "a"}) + "\n")


def _root_in_data(sample: np.ndarray, root: str) -> np.ndarray:
    """A path given as data (io.file.read's input) may name a file of the case's tree."""
    raw = sample.tobytes()
    if sample.dtype != np.uint8 or b"{root}" not in raw:
        return sample
    return np.frombuffer(raw.replace(b"{root}", root.encode()), np.uint8)


# The repository's own files (schema examples read stoker's sample data) are stored as
# "{repo}/..." so that the table does not depend on where the checkout lies.
REPO = str(pathlib.Path(__file__).resolve().parents[1])


def _with_root(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root).replace("{repo}", REPO)
    if isinstance(value, list | tuple):
        return type(value)(_with_root(v, root) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind == "U":
        return np.vectorize(lambda v: v.replace("{root}", root).replace("{repo}", REPO))(value)
    return value


def _returning(batch: list) -> Any:
    # Not `lambda s=samples: s`: a parameter, even with a default, is handed the iteration.
    return lambda: batch


def builtin_name(exc: BaseException) -> str:
    """The first builtin exception class the error is an instance of, by name."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins" and hasattr(builtins, cls.__name__):
            return cls.__name__
    return "Exception"


def run_case(lib: Lib, name: str, op: dict, arg: str | None = None, form: str | None = None,
             root: str = "") -> tuple[str, BaseException | None]:
    """Builds and runs ``fn.<name>`` with ``op``'s base arguments and, when ``arg`` is given,
    that argument in ``form``; returns the outcome and the exception, if any."""
    batch = op["batch"]
    stage = "call"
    pipe = None
    try:
        pipe = lib.Pipeline(batch_size=batch, num_threads=1, device_id=None, seed=SEED,
                            prefetch_queue_depth=1)
        with pipe:
            spec = op["args"].get(arg, {})
            drop = set(spec.get("drop", ()))
            kwargs = {k: _with_root(decode(v, lib.types), root)
                      for k, v in {**op["base"], **spec.get("with", {})}.items()
                      if k not in drop}
            if arg is not None:
                value = form_value(form, spec["value"], KINDS[spec["type"]], lib, batch)
                kwargs[arg] = _with_root(value, root)
            inputs = []
            for inp in op["inputs"]:
                samples = [_root_in_data(s, root) for s in input_arrays(inp)]
                inputs.append(lib.fn.external_source(source=_returning(samples), batch=True,
                                                     layout=inp["layout"]))
            func = lib.fn
            for part in name.split("."):
                func = getattr(func, part)
            out = func(*inputs, **kwargs)
            pipe.set_outputs(*(out if isinstance(out, list | tuple) else [out]))
        stage = "build"
        pipe.build()
        stage = "run"
        pipe.run()
    except Exception as e:  # noqa: BLE001  (every failure is an outcome to record)
        return f"{stage}:{builtin_name(e)}", e
    finally:
        close = getattr(pipe, "close", None)
        if close is not None:
            close()
    return "ok", None
