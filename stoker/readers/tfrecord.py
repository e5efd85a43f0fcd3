"""TFRecord files: DALI's index files, indexing a file by walking its records, and gzip.

DALI's index (what its ``tfrecord2idx`` writes and ``fn.readers.tfrecord`` reads) is text,
one record per line: the record's byte offset and its size including the 16 bytes of
framing. DALI reads the numbers as whitespace-separated pairs, so line breaks do not
matter; a token that is not a number is an error here (DALI stops reading there and
silently drops the rest).

Walking a file checks each record header's length checksum (a masked CRC32C of the 8
length bytes), which tells a TFRecord from other bytes. A gzip-compressed file (TF's
``compression_type="GZIP"``, which DALI cannot read) is recognised by its magic bytes
when its first bytes are not a valid record header, and decompressed once into an
unnamed temporary file that the reader then maps like any other; its index lists offsets
into the decompressed stream.
"""

from __future__ import annotations

import os
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from stoker.kernels.cpu.compiled import loops
from stoker.readers.index import DatasetError
from stoker.readers.records import RecordIndex, RecordStore

_GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 20


class TFRecordFormatError(DatasetError):
    """A file is not a TFRecord file, or is cut short; names the file and the offset."""


def parse_index(data: bytes, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, sizes) from an index file's text."""
    tokens = data.split()
    if len(tokens) % 2:
        raise DatasetError(f"index file {path!r} has an odd number of values "
                           f"({len(tokens)}); each record needs '<offset> <size>'")
    try:
        values = np.array(tokens, dtype=np.bytes_).astype(np.int64) if tokens \
            else np.zeros(0, np.int64)
    except (ValueError, OverflowError):
        bad = next(t for t in tokens if not t.lstrip(b"+-").isdigit())
        line = data[:data.find(bad)].count(b"\n") + 1
        raise DatasetError(f"index file {path!r}, line {line}: {bad[:40]!r} is not a "
                           "number; expected '<offset> <size>' per record") from None
    offsets, sizes = values[0::2], values[1::2]
    if len(offsets) == 0:
        raise DatasetError(f"index file {path!r} is empty (DALI: Content of index files "
                           "should not be empty)")
    bad = (offsets < 0) | (sizes < 16)
    if bad.any():
        r = int(np.argmax(bad))
        raise DatasetError(f"index file {path!r}, record {r}: offset {offsets[r]} and size "
                           f"{sizes[r]} cannot be a TFRecord record (a record has at least "
                           "16 bytes of framing)")
    return offsets, sizes


def read_index(path: str) -> tuple[np.ndarray, np.ndarray]:
    with open(path, "rb") as f:
        return parse_index(f.read(), path)


def format_index(offsets: np.ndarray, sizes: np.ndarray) -> bytes:
    """The index file's text: ``<offset> <size>`` per line."""
    out = np.empty(42 * len(offsets), np.uint8)
    n = loops("readers.text_loops").pairs(np.ascontiguousarray(offsets, np.int64),
                                          np.ascontiguousarray(sizes, np.int64), 32, out)
    return out[:n].tobytes()


def is_gzip(fd: int) -> bool:
    """Gzip magic and not a valid record header (a record of 0x08_8b1f... bytes would
    start with the same three bytes)."""
    head = os.pread(fd, 12, 0)
    if not head.startswith(_GZIP_MAGIC):
        return False
    if len(head) < 12:
        return True
    buf = np.frombuffer(head, np.uint8)
    tf = loops("readers.tfrecord_loops")
    return tf.masked_crc32c(buf, 0, 8, tf._CRC_TABLE) != tf.le_u32(buf, 8)


def decompressed(path: str, fd: int) -> int:
    """A descriptor of an unnamed temporary file holding the decompressed stream (gone
    when the descriptor closes)."""
    out = tempfile.TemporaryFile(prefix="stoker-tfrecord-")
    stream = zlib.decompressobj(wbits=31)  # gzip framing
    offset = 0
    try:
        while True:
            chunk = os.pread(fd, 4 * _CHUNK, offset)
            if not chunk:
                break
            offset += len(chunk)
            out.write(stream.decompress(chunk))
            while stream.unused_data:  # concatenated gzip members
                rest = stream.unused_data
                stream = zlib.decompressobj(wbits=31)
                out.write(stream.decompress(rest))
        out.write(stream.flush())
        if not stream.eof:
            raise TFRecordFormatError(f"{path!r}: the gzip stream is cut short (the file "
                                      f"ends at byte {offset})")
    except zlib.error as e:
        out.close()
        raise TFRecordFormatError(f"{path!r}: not a valid gzip stream ({e})") from None
    except BaseException:
        out.close()
        raise
    out.flush()
    fd = os.dup(out.fileno())
    out.close()
    return fd


def scan(data: np.ndarray, path: str) -> tuple[np.ndarray, np.ndarray, str | None]:
    """(offsets, sizes, problem) of the records of a file's bytes (its mapping). A file
    that goes bad gives its good records and, as ``problem``, what is wrong from the
    offset where they stop (that tail becomes a record that fails to read, so
    ``on_error="skip"`` can skip it); a file whose first bytes are no record header
    raises TFRecordFormatError."""
    tf = loops("readers.tfrecord_loops")
    size = len(data)
    cap = 1 << 14
    offsets, sizes = np.empty(cap, np.int64), np.empty(cap, np.int64)
    count, at, status = 0, 0, 4
    while status == 4:  # the arrays filled up: grow them and walk on
        if count == len(offsets):
            offsets = np.resize(offsets, 4 * len(offsets))
            sizes = np.resize(sizes, 4 * len(sizes))
        count, at, status = tf.walk_frames(data[at:], at, size, offsets, sizes, count,
                                           tf._CRC_TABLE)
    problem = None
    if status == 0:
        problem = (f"the file ends at byte {size}, inside the record header at offset "
                   f"{at} (the file is truncated)")
    elif status == 2:
        problem = (f"the bytes at offset {at} are not a TFRecord record header (its "
                   "length checksum does not match)")
    elif status == 3:
        length = int.from_bytes(data[at:at + 8].tobytes(), "little")
        problem = (f"the record at offset {at} claims a payload of {length} bytes, but the "
                   f"file ends at byte {size} (the file is truncated)")
    if status == 2 and count == 0:
        raise TFRecordFormatError(f"{path!r}: {problem} (is it a TFRecord file?)")
    return offsets[:count].copy(), sizes[:count].copy(), problem


@dataclass
class TFRecordSet:
    """The records of a reader's files, and what indexing them found."""

    store: RecordStore
    index: RecordIndex
    # Rows that cannot be read (the damaged tail of a file indexed here) -> why.
    bad: dict[int, str] = field(default_factory=dict)
    # Files that had no index file and were indexed by walking them.
    walked: list[str] = field(default_factory=list)


def open_files(paths: Sequence[str], index_paths: Sequence[str] | None, use_mmap: bool,
               who: str) -> TFRecordSet:
    """Opens the files (decompressing gzip ones) and reads or builds their indices. An
    index file that does not exist is built in memory, like a missing ``index_paths``."""
    fds: dict[int, int] = {}
    try:
        for f, path in enumerate(paths):
            fd = _open(path, who)
            try:
                if is_gzip(fd):
                    fds[f] = decompressed(path, fd)
            finally:
                os.close(fd)
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    store = RecordStore(paths, use_mmap=use_mmap, fds=fds)
    try:
        return _index(store, index_paths, who)
    except BaseException:
        store.close()
        raise


def _open(path: str, who: str) -> int:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise DatasetError(f"{who}: TFRecord file {path!r} does not exist") from None
    except OSError as e:
        raise DatasetError(f"{who}: cannot open TFRecord file {path!r}: {e.strerror}") from None


def _index(store: RecordStore, index_paths: Sequence[str] | None, who: str) -> TFRecordSet:
    spans, bad, walked = [], {}, []
    row = 0
    for f, path in enumerate(store.paths):
        idx = index_paths[f] if index_paths is not None else None
        if idx is not None and os.path.exists(idx):
            try:
                offsets, sizes = read_index(idx)
            except DatasetError as e:
                raise DatasetError(f"{who}: {e}") from None
            except OSError as e:
                raise DatasetError(f"{who}: cannot read index file {idx!r}: "
                                   f"{e.strerror}") from None
        else:
            try:
                offsets, sizes, problem = scan(store.mapped(f), path)
            except TFRecordFormatError as e:
                raise TFRecordFormatError(f"{who}: {e}") from None
            walked.append(path)
            if problem is not None:
                # The damaged tail is one record that fails when read (or is skipped).
                end = int(offsets[-1] + sizes[-1]) if len(offsets) else 0
                offsets = np.append(offsets, end)
                sizes = np.append(sizes, store.file_size(f) - end)
                bad[row + len(offsets) - 1] = problem
        spans.append((offsets, sizes))
        row += len(offsets)
    return TFRecordSet(store, RecordIndex.concat(store.paths, spans), bad, walked)
