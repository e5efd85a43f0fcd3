"""Writers of the container formats the readers take, for tests and the DALI recorders.

Written from the formats' specifications, independently of stoker's readers (nothing here
imports ``stoker.readers``): TFRecord framing with TensorFlow's masked CRC32C, protobuf
``tf.train.Example``, Caffe ``Datum`` and Caffe2 ``TensorProtos`` encodings, MXNet
RecordIO, tar archives (GNU, PAX, ustar through ``tarfile``) and LMDB databases.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

# -- CRC32C (Castagnoli), bit by bit from its polynomial; slow, for small test files -------


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc_table()


def crc32c(data: bytes) -> int:
    try:  # the hardware one when installed: the big benchmark files need it
        import crc32c as fast

        return fast.crc32c(data)
    except ImportError:
        pass
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """TFRecord's mask: rotate right by 15 and add a constant (TensorFlow's crc32c.h)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# -- protobuf wire format -------------------------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64s take ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def field_fixed32(number: int, value: float) -> bytes:
    return varint(number << 3 | 5) + struct.pack("<f", value)


def feature(value: Any, packed: bool = True) -> bytes:
    """A ``tf.train.Feature``: bytes (or a list of bytes) -> BytesList, floats ->
    FloatList, ints -> Int64List."""
    if isinstance(value, bytes | bytearray | str):
        value = [value]
    values = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else list(value)
    if values and isinstance(values[0], bytes | bytearray | str):
        body = b"".join(field_bytes(1, v.encode() if isinstance(v, str) else bytes(v))
                        for v in values)
        return field_bytes(1, body)
    if values and isinstance(values[0], float | np.floating):
        if packed:
            body = field_bytes(1, struct.pack(f"<{len(values)}f", *values))
        else:
            body = b"".join(field_fixed32(1, v) for v in values)
        return field_bytes(2, body)
    ints = [int(v) for v in values]
    if packed:
        body = field_bytes(1, b"".join(varint(v) for v in ints)) if ints else b""
    else:
        body = b"".join(field_varint(1, v) for v in ints)
    return field_bytes(3, body)


def example(features: dict[str, Any], packed: bool = True) -> bytes:
    """A serialized ``tf.train.Example``; a value that is already bytes of a Feature can be
    given as ``("raw", feature_bytes)``."""
    entries = b""
    for name, value in features.items():
        if isinstance(value, tuple) and value and value[0] == "raw":
            body = value[1]
        else:
            body = feature(value, packed)
        entries += field_bytes(1, field_bytes(1, name.encode()) + field_bytes(2, body))
    return field_bytes(1, entries)


# -- TFRecord --------------------------------------------------------------------------------


def tfrecord_frame(payload: bytes) -> bytes:
    length = struct.pack("<Q", len(payload))
    return (length + struct.pack("<I", masked_crc(length)) + payload
            + struct.pack("<I", masked_crc(payload)))


def write_tfrecord(path: Any, payloads: Iterable[bytes], compress: bool = False
                   ) -> list[tuple[int, int]]:
    """Writes the records; returns (offset, framed size) of each, as DALI's index lists
    them (offsets into the uncompressed stream)."""
    data = bytearray()
    spans = []
    for p in payloads:
        frame = tfrecord_frame(p)
        spans.append((len(data), len(frame)))
        data += frame
    raw = bytes(data)
    with open(path, "wb") as f:
        f.write(gzip.compress(raw) if compress else raw)
    return spans


def write_index(path: Any, spans: Sequence[tuple[int, int]]) -> None:
    with open(path, "w") as f:
        f.writelines(f"{o} {s}\n" for o, s in spans)


# -- tar -------------------------------------------------------------------------------------


def write_tar(path: Any, members: Iterable[tuple[str, bytes]], fmt: str = "gnu") -> None:
    """A tar of regular files; ``fmt`` is "gnu", "pax" or "ustar" (tarfile's formats)."""
    formats = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT,
               "ustar": tarfile.USTAR_FORMAT}
    with tarfile.open(path, "w", format=formats[fmt]) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))


def add_tar_dir(path: Any, name: str) -> None:
    """Appends a folder entry (not a regular file) to an existing uncompressed tar."""
    with tarfile.open(path, "a") as tar:
        info = tarfile.TarInfo(name)
        info.type = tarfile.DIRTYPE
        tar.addfile(info)


# -- MXNet RecordIO --------------------------------------------------------------------------

RECORDIO_MAGIC = 0xCED7230A


def irheader(label: float | Sequence[float], record_id: int = 0, id2: int = 0) -> bytes:
    """MXNet's IRHeader (flag, label, id, id2), with a multi-value label after it."""
    if isinstance(label, int | float):
        return struct.pack("<IfQQ", 0, float(label), record_id, id2)
    labels = [float(v) for v in label]
    return (struct.pack("<IfQQ", len(labels), 0.0, record_id, id2)
            + struct.pack(f"<{len(labels)}f", *labels))


def recordio_frame(data: bytes, split_at: Sequence[int] = ()) -> bytes:
    """One record; ``split_at`` are offsets in ``data`` where the magic number occurs: as
    MXNet's writer does, the record is cut into parts there (continuation flags 1, 2...,
    3) and those four bytes are dropped (a reader puts them back between the parts)."""
    magic = struct.pack("<I", RECORDIO_MAGIC)
    parts, prev = [], 0
    for p in split_at:
        assert data[p:p + 4] == magic, "split only where the magic number is"
        parts.append(data[prev:p])
        prev = p + 4
    parts.append(data[prev:])
    out = bytearray()
    for k, part in enumerate(parts):
        flag = 0 if len(parts) == 1 else 1 if k == 0 else 3 if k == len(parts) - 1 else 2
        out += struct.pack("<II", RECORDIO_MAGIC, flag << 29 | len(part)) + part
        out += b"\0" * (-len(part) % 4)
    return bytes(out)


def write_recordio(rec_path: Any, idx_path: Any | None, records: Iterable[bytes],
                   splits: dict[int, Sequence[int]] | None = None,
                   start: int = 0) -> list[int]:
    """Writes the records (data = IRHeader + payload); ``idx_path`` gets MXNet's
    ``key\\toffset`` lines, offsets counted from ``start`` (several .rec files share one
    index in DALI). Returns the offsets."""
    offsets, data = [], bytearray()
    for k, rec in enumerate(records):
        offsets.append(start + len(data))
        data += recordio_frame(rec, (splits or {}).get(k, ()))
    with open(rec_path, "wb") as f:
        f.write(bytes(data))
    if idx_path is not None:
        with open(idx_path, "w") as f:
            f.writelines(f"{k}\t{o}\n" for k, o in enumerate(offsets))
    return offsets


# -- Caffe / Caffe2 protobufs and LMDB -------------------------------------------------------


def datum(data: bytes = b"", label: int | None = None, encoded: bool = True,
          shape: tuple[int, int, int] | None = None,
          float_data: Sequence[float] = ()) -> bytes:
    """A Caffe ``Datum`` (channels=1, height=2, width=3, data=4, label=5, float_data=6,
    encoded=7)."""
    out = b""
    if shape is not None:
        c, h, w = shape
        out += field_varint(1, c) + field_varint(2, h) + field_varint(3, w)
    if data:
        out += field_bytes(4, data)
    if label is not None:
        out += field_varint(5, label)
    for v in float_data:
        out += field_fixed32(6, v)
    if encoded:
        out += field_varint(7, 1)
    return out


# Caffe2 TensorProto.DataType values.
C2_FLOAT, C2_INT32, C2_BYTE, C2_STRING, C2_INT64 = 1, 2, 3, 4, 10


def tensor_proto(data_type: int, values: Any, dims: Sequence[int] = ()) -> bytes:
    """A Caffe2 ``TensorProto`` (dims=1, data_type=2, float_data=3 packed, int32_data=4
    packed, byte_data=5, string_data=6, int64_data=10 packed)."""
    out = b"".join(field_varint(1, d) for d in dims) + field_varint(2, data_type)
    if data_type == C2_FLOAT:
        vals = [float(v) for v in values]
        out += field_bytes(3, struct.pack(f"<{len(vals)}f", *vals))
    elif data_type == C2_INT32:
        out += field_bytes(4, b"".join(varint(int(v)) for v in values))
    elif data_type == C2_INT64:
        out += field_bytes(10, b"".join(varint(int(v)) for v in values))
    elif data_type == C2_BYTE:
        out += field_bytes(5, bytes(values))
    elif data_type == C2_STRING:
        out += field_bytes(6, bytes(values))
    else:
        raise ValueError(data_type)
    return out


def tensor_protos(protos: Sequence[bytes]) -> bytes:
    return b"".join(field_bytes(1, p) for p in protos)


def write_lmdb(path: Any, items: Iterable[tuple[bytes, bytes]], map_size: int = 1 << 28
               ) -> None:
    import lmdb

    env = lmdb.open(str(path), map_size=map_size, subdir=True)
    try:
        with env.begin(write=True) as txn:
            for key, value in items:
                txn.put(key, value)
    finally:
        env.close()
