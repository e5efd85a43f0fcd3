"""``fn.readers.caffe`` and ``fn.readers.caffe2``: entries of LMDB databases holding Caffe
``Datum`` or Caffe2 ``TensorProtos`` values, as DALI 2.4 reads them.

Every entry of every database, in key order, database after database, is one sample
(``readers/base.py`` shards, shuffles and checkpoints them; ``stoker/readers/lmdb_db.py``
reads them, ``stoker/readers/caffe.py`` decodes them).

caffe outputs: the Datum's data (uint8, 1-D: encoded or raw bytes as stored) if
``image_available``, its int32 label ``[1]`` if ``label_available``. caffe2 outputs, in
order: the image (a STRING proto's bytes, 1-D, or a BYTE proto shaped by its dims) if
``image_available``; the label per ``label_type`` (0: one INT32 or FLOAT value; 1: INT32
indices as an int32 0/1 vector of ``num_labels``; 2: the proto's values; 3: indices and
FLOAT weights as a float32 vector of ``num_labels``; 4: none); ``additional_inputs``
more protos (FLOAT, INT32 or INT64), and a final INT32 box proto if ``bbox``.

Where stoker differs from DALI 2.4 on purpose: caffe2 ``label_type`` 1 and 3 work (DALI
2.4 fails on both: "new_type must be valid type", and a check of the wrong proto);
argument values DALI refuses at run (no output at all, an unknown label_type) are refused
at the call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stoker.errors import ArgumentError
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers import caffe as proto
from stoker.readers.lmdb_db import LmdbIndex
from stoker.readers.order import SampleIds
from stoker.readers.pool import ChunkPool
from stoker.readers.samples import path as _sample


class LmdbReader(IndexedReader):
    """The LMDB entries; ``_decode`` makes a sample's outputs from its value."""

    def __init__(self, op: Any, pipeline: Any):
        self._pool = ChunkPool(getattr(pipeline, "num_threads", 1) or 1, "stoker-lmdb")
        super().__init__(op, pipeline)

    def _build_index(self) -> LmdbIndex:
        return LmdbIndex(self.args["path"], self._who())

    def _file_groups(self) -> np.ndarray:
        return self._prepare().file_groups()

    def _decode(self, buf: np.ndarray, a: int, b: int) -> list[np.ndarray]:
        raise NotImplementedError

    def _read(self, ids: SampleIds, bctx: Any) -> tuple[list, list[str]]:
        from stoker.executor.context import FAILED

        index, rows = self.index, ids.index

        def decode_all(chunk: np.ndarray) -> list:
            out: list = []
            for value in index.values(chunk):
                try:
                    out.append(self._decode(value, 0, len(value)))
                except proto.ProtoError as e:
                    out.append(e)
            return out

        names = index.where(rows)
        n_out = self.op.schema.outputs_for(self.args)
        outputs: list[list] = [[] for _ in range(n_out)]
        for j, sample in enumerate(self._pool.map(decode_all, rows)):
            if isinstance(sample, Exception):
                why = f"{names[j]}: {sample}"
                if bctx.failures is None:
                    raise self.sample_error(why, names[j]) from None
                bctx.fail(j, str(self.sample_error(why, names[j])))
                sample = [FAILED] * n_out
            for out, value in zip(outputs, sample, strict=True):
                out.append(value)
        return outputs, names

    def close(self) -> None:
        self._pool.close()
        if self.index is not None:
            self.index.close()


class CaffeReader(LmdbReader):
    def _decode(self, buf: np.ndarray, a: int, b: int) -> list[np.ndarray]:
        image, label = proto.datum(buf, a, b)
        out = []
        if self.args["image_available"]:
            out.append(image)
        if self.args["label_available"]:
            out.append(label)
        return out


class Caffe2Reader(LmdbReader):
    def _decode(self, buf: np.ndarray, a: int, b: int) -> list[np.ndarray]:
        args = self.args
        protos = proto.tensor_protos(buf, a, b)
        need = _caffe2_protos(args)
        if len(protos) < need:
            raise proto.ProtoError(f"the value holds {len(protos)} TensorProtos; the reader's "
                                   f"arguments need {need}")
        tensors = iter(proto.tensor(buf, s, e) for s, e in protos)
        out = []
        if args["image_available"]:
            kind, dims, image = next(tensors)
            if kind == proto.BYTE:
                if not dims or int(np.prod(dims)) != len(image):
                    raise proto.ProtoError(f"its BYTE image proto has {len(image)} bytes and "
                                           f"dims {dims}, which do not match")
                image = image.reshape(dims)
            elif kind != proto.STRING:
                raise proto.ProtoError(f"its image proto is {proto.NAMES.get(kind, kind)}, "
                                       "not STRING (encoded) or BYTE (raw)")
            out.append(image)
        label_type, n = args["label_type"], args["num_labels"]
        if label_type == 0:
            kind, _, values = next(tensors)
            if kind not in (proto.INT32, proto.FLOAT) or len(values) != 1:
                raise proto.ProtoError(f"label_type=0 wants one INT32 or FLOAT label, the "
                                       f"proto is {proto.NAMES.get(kind, kind)} with "
                                       f"{len(values)} values")
            out.append(values)
        elif label_type in (1, 3):
            kind, _, indices = next(tensors)
            weights = next(tensors)[2] if label_type == 3 else None
            if kind != proto.INT32 or (weights is not None and (
                    weights.dtype != np.float32 or len(weights) != len(indices))):
                raise proto.ProtoError(f"label_type={label_type} wants INT32 indices"
                                       + (" and as many FLOAT weights" if weights is not None
                                          else ""))
            if len(indices) and (indices.min() < 0 or indices.max() >= n):
                raise proto.ProtoError(f"label index {int(indices.max())} is out of range "
                                       f"for num_labels={n} (DALI: Label index out of "
                                       "bounds)")
            label = np.zeros(n, np.int32 if weights is None else np.float32)
            label[indices] = 1 if weights is None else weights
            out.append(label)
        elif label_type == 2:
            kind, _, values = next(tensors)
            if kind not in (proto.INT32, proto.FLOAT):
                raise proto.ProtoError("label_type=2 wants an INT32 or FLOAT label proto")
            out.append(values)
        for _ in range(args["additional_inputs"]):
            kind, _, values = next(tensors)
            if kind not in (proto.FLOAT, proto.INT32, proto.INT64):
                raise proto.ProtoError(f"an additional proto is {proto.NAMES.get(kind, kind)} "
                                       "(DALI: Unsupported data type in additional proto)")
            out.append(values)
        if args["bbox"]:
            kind, _, values = next(tensors)
            if kind != proto.INT32:
                raise proto.ProtoError("the bbox proto must be INT32")
            out.append(values)
        return out


def _caffe2_protos(args: dict) -> int:
    label = {0: 1, 1: 1, 2: 1, 3: 2, 4: 0}[args["label_type"]]
    return int(args["image_available"]) + label + args["additional_inputs"] + int(args["bbox"])


def _caffe2_outputs(args: dict) -> int:
    return (int(args["image_available"]) + int(args["label_type"] != 4)
            + args["additional_inputs"] + int(args["bbox"]))


def _check(fn_name: str, args: dict) -> None:
    if not args["path"]:
        raise ArgumentError(f"{fn_name}: argument 'path' must name at least one LMDB "
                            "database")
    check_reader_args(fn_name, args, random_with_epoch_shuffle=False)


def _check_caffe(args: dict) -> None:
    _check("fn.readers.caffe", args)
    if not args["image_available"] and not args["label_available"]:
        raise ArgumentError("fn.readers.caffe: with image_available=False and "
                            "label_available=False the reader would have no output")


def _check_caffe2(args: dict) -> None:
    _check("fn.readers.caffe2", args)
    if _caffe2_outputs(args) == 0:
        raise ArgumentError("fn.readers.caffe2: these arguments leave the reader no output")


_COMMON = (Arg("path", "strs", REQUIRED, "LMDB databases (folders), read as one dataset, "
               "in key order, one after another."),
           Arg("image_available", "bool", True, "Whether the values hold an image to "
               "output."))

register(OpSchema(
    name="readers.caffe",
    doc="Reads Caffe LMDB databases: each Datum's data (uint8, 1-D) and int32 label.",
    args=(*_COMMON,
          Arg("label_available", "bool", True, "Whether to output the label."),
          *reader_args(shuffle_after_epoch=False)),
    num_outputs=lambda args: int(args["image_available"]) + int(args["label_available"]),
    stage="source",
    instance=CaffeReader,
    random=False,
    layout=lambda in_layouts, args: [""] * (int(args["image_available"])
                                            + int(args["label_available"])),
    dtype=lambda in_dtypes, args: ([np.dtype(np.uint8)] * args["image_available"]
                                   + [np.dtype(np.int32)] * args["label_available"]),
    check=_check_caffe,
    examples=(
        Example(args={"path": [_sample("mini_caffe")]}),
        Example(args={"path": [_sample("mini_caffe")], "label_available": False,
                      "random_shuffle": True, "seed": 2}),
        Example(args={"path": [_sample("mini_caffe")], "image_available": False,
                      "label_available": False}, raises=ArgumentError,
                match="would have no output"),
    ),
))

register(OpSchema(
    name="readers.caffe2",
    doc="Reads Caffe2 LMDB databases of TensorProtos: the image, the label (per "
        "label_type), additional protos and a box, as the arguments say.",
    args=(*_COMMON,
          Arg("label_type", "int", 0, "0: one label; 1: label indices, as a 0/1 vector of "
              "num_labels; 2: a dense label vector; 3: indices and weights, as a weighted "
              "vector of num_labels; 4: no label.", choices=(0, 1, 2, 3, 4)),
          Arg("num_labels", "int", 1, "Number of classes (label_type 1 and 3).",
              range=(1, None)),
          Arg("additional_inputs", "int", 0, "Protos after the label to output as they are.",
              range=(0, None)),
          Arg("bbox", "bool", False, "Whether a last INT32 proto holds a box."),
          *reader_args(shuffle_after_epoch=False)),
    num_outputs=_caffe2_outputs,
    stage="source",
    instance=Caffe2Reader,
    random=False,
    layout=lambda in_layouts, args: [""] * _caffe2_outputs(args),
    check=_check_caffe2,
    examples=(
        Example(args={"path": [_sample("mini_caffe2")]}),
        Example(args={"path": [_sample("mini_caffe2")], "label_type": 1, "num_labels": 3,
                      "additional_inputs": 1, "bbox": True, "random_shuffle": True}),
        Example(args={"path": [_sample("mini_caffe2")], "label_type": 7},
                raises=ArgumentError, match="'label_type' must be one of"),
    ),
))
