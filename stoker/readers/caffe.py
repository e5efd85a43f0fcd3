"""Caffe ``Datum`` and Caffe2 ``TensorProtos`` values (protobuf, decoded without the
protobuf package) as DALI 2.4's Caffe and Caffe2 readers output them.

Datum (caffe.proto): channels 1, height 2, width 3, data 4 (bytes), label 5 (int32),
float_data 6, encoded 7. DALI outputs ``data`` as 1-D uint8 whether encoded or raw
(measured), and the label as int32 ``[1]`` (``[0]`` when the Datum has none).

TensorProto (caffe2.proto): dims 1, data_type 2 (FLOAT 1, INT32 2, BYTE 3, STRING 4,
INT64 10; default FLOAT), float_data 3, int32_data 4, byte_data 5, string_data 6,
int64_data 10; a value is ``TensorProtos{repeated TensorProto protos = 1}``.
"""

from __future__ import annotations

import numpy as np

from stoker.kernels.cpu.compiled import loops

FLOAT, INT32, BYTE, STRING, INT64 = 1, 2, 3, 4, 10
NAMES = {FLOAT: "FLOAT", INT32: "INT32", BYTE: "BYTE", STRING: "STRING", INT64: "INT64"}
_NO_LABEL = -(1 << 62)


class ProtoError(ValueError):
    """A value is not the message it should be; the text says what is wrong."""


def datum(buf: np.ndarray, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(image bytes, label) of the Datum ``buf[a:b]``."""
    pb = loops("readers.protobuf_loops")
    if not pb.well_formed(buf, a, b):
        raise ProtoError("the value is not a Caffe Datum (malformed protobuf)")
    s, e = pb.last_bytes(buf, a, b, 4)
    image = buf[s:e] if s >= 0 else np.zeros(0, np.uint8)
    label = pb.last_varint(buf, a, b, 5, _NO_LABEL)
    labels = (np.zeros(0, np.int32) if label == _NO_LABEL
              else np.array([np.int64(label).astype(np.int32)], np.int32))
    return image, labels


def tensor_protos(buf: np.ndarray, a: int, b: int) -> list[tuple[int, int]]:
    """The byte ranges of the TensorProtos ``buf[a:b]`` holds, in order."""
    pb = loops("readers.protobuf_loops")
    if not pb.well_formed(buf, a, b):
        raise ProtoError("the value is not Caffe2 TensorProtos (malformed protobuf)")
    out = []
    k = 0
    while True:
        s, e = pb.find_bytes(buf, a, b, 1, k)
        if s < 0:
            return out
        if not pb.well_formed(buf, s, e):
            raise ProtoError(f"its TensorProto {k} is malformed")
        out.append((s, e))
        k += 1


def tensor(buf: np.ndarray, a: int, b: int) -> tuple[int, list[int], np.ndarray]:
    """(data type, dims, values) of the TensorProto ``buf[a:b]``: numbers as an array of
    their type, BYTE data and the first STRING as uint8 views."""
    pb = loops("readers.protobuf_loops")
    kind = int(pb.last_varint(buf, a, b, 2, FLOAT))
    ndims = pb.count_numbers(buf, a, b, 1, 0)
    dims = np.zeros(max(ndims, 0), np.int64)
    pb.copy_varints(buf, a, b, 1, dims, 0)
    if kind == FLOAT:
        out = np.empty(pb.count_numbers(buf, a, b, 3, 4), np.float32)
        pb.copy_fixed(buf, a, b, 3, 4, out.view(np.uint8), 0)
    elif kind in (INT32, INT64):
        field = 4 if kind == INT32 else 10
        wide = np.empty(pb.count_numbers(buf, a, b, field, 0), np.int64)
        pb.copy_varints(buf, a, b, field, wide, 0)
        out = wide.astype(np.int32) if kind == INT32 else wide
    elif kind in (BYTE, STRING):
        s, e = (pb.last_bytes(buf, a, b, 5) if kind == BYTE
                else pb.find_bytes(buf, a, b, 6, 0))
        out = buf[s:e] if s >= 0 else np.zeros(0, np.uint8)
    else:
        raise ProtoError(f"TensorProto data type {kind} is not supported (FLOAT, INT32, "
                         "BYTE, STRING and INT64 are)")
    return kind, dims.tolist(), out
