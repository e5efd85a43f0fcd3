"""``fn.readers.nemo_asr``: decoded audio (and its rate, text and manifest index) from NeMo
manifests, with readers.file's contract (sharding, exact shuffles, epochs, checkpoints,
on_error="skip", exactly once per epoch under PARTIAL).

The manifest rules are in ``stoker/readers/nemo_manifest.py``; decoding is
``decoders.audio``'s (``stoker/kernels/cpu/audio/decode.py``), on a pool of the pipeline's
``num_threads`` threads, which also decodes the next batch while this one goes through the
rest of the pipeline (DALI decodes in its reader's prefetch thread too).

DALI 2.4 facts kept (measured): ``offset`` and ``duration`` are honoured, truncated to
whole frames (the docstring's "not yet implemented" is out of date); the rate output is
the file's rate even when ``sample_rate`` resamples; the text carries no terminator; an
offset past the end of the file is an error. Differences: see the manifest module (bad
lines are skipped, not crashes) and readers.file (exact-permutation shuffles).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from stoker import types
from stoker.errors import ArgumentError, SampleError
from stoker.kernels.cpu.audio.decode import AudioDecodeError, decode, pcm16_wav
from stoker.operators.audio.decoders import RESAMPLERS
from stoker.operators.machinery.registry import register
from stoker.operators.machinery.schema import REQUIRED, Arg, Example, OpSchema
from stoker.operators.readers.args import check_reader_args, reader_args
from stoker.operators.readers.base import IndexedReader
from stoker.readers.files import read_file
from stoker.readers.nemo_manifest import Manifest, read_manifests

T = types.DALIDataType
_FN = "fn.readers.nemo_asr"


class NemoAsrReader(IndexedReader):
    """The source instance: the readers' shared cursor and order over a manifest."""

    def __init__(self, op: Any, pipeline: Any):
        self._threads = max(1, min(int(getattr(pipeline, "num_threads", 1) or 1), 8))
        self._pool: ThreadPoolExecutor | None = None
        # The next batch's manifest rows and the pool's futures decoding them.
        self._ahead: tuple[list[int], list[Future]] | None = None
        super().__init__(op, pipeline)

    def _build_index(self) -> Manifest:
        a, who = self.args, self._who()
        return read_manifests(a["manifest_filepaths"], a["min_duration"],
                              a["max_duration"], who)

    # -- decoding -------------------------------------------------------------------------
    def _decode_one(self, row: int) -> tuple[np.ndarray, int] | BaseException:
        m, a = self.index, self.args
        try:
            # read straight into an array: no bytes object
            return decode(read_file(m.paths[row]), offset_s=float(m.offsets[row]),
                          duration_s=float(m.durations[row]),
                          target_rate=float(np.float32(a["sample_rate"])),
                          downmix=a["downmix"], dtype=types.to_numpy(a["dtype"]),
                          quality=a["quality"], method=a["resampler"])
        except (OSError, AudioDecodeError, ValueError, RuntimeError) as e:
            return e

    def _decode_rows(self, rows: list[int]) -> list:
        return [self._decode_one(r) for r in rows]

    def _submit(self, rows: list[int]) -> list[Future]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="stoker-nemo")
        k = max(1, min(self._threads, len(rows)))
        bounds = [len(rows) * j // k for j in range(k + 1)]
        return [self._pool.submit(self._decode_rows, rows[lo:hi])
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]

    def _decode(self, rows: list[int], ahead: list[int]) -> list:
        pending, self._ahead = self._ahead, None
        if pending is not None and pending[0] == rows:
            out = [r for f in pending[1] for r in f.result()]
        elif self._threads > 1 and len(rows) > 1:
            out = [r for f in self._submit(rows) for r in f.result()]
        else:
            out = self._decode_rows(rows)
        if ahead and self._threads > 1:
            self._ahead = (ahead, self._submit(ahead))
        return out

    def _error(self, row: int, e: BaseException) -> SampleError:
        path = self.index.paths[row]
        if isinstance(e, OSError):
            why = f"cannot read file {path!r}: {e.strerror or e}"
        else:
            why = f"cannot decode {path!r}: {e}"
        return SampleError(f"{self._who()}: {why}", op=_FN, source=path, where=self.op.where)

    # -- the source protocol --------------------------------------------------------------
    def _read(self, ids: Any, bctx: Any) -> tuple[list, list[str]]:
        from stoker.executor.context import FAILED

        m, rows = self.index, ids.index.tolist()
        ahead = self._cursor().peek(len(rows)).index.tolist() if bctx.failures is None else []
        audio, rates = [], []
        for j, (row, got) in enumerate(zip(rows, self._decode(rows, ahead), strict=True)):
            if isinstance(got, BaseException):
                err = self._error(row, got)
                if not bctx.fail(j, str(err)):
                    raise err from got
                got = (FAILED, 0)
            audio.append(got[0])
            rates.append(np.array(got[1], np.float32))
        outs: list = [audio]
        a = self.args
        if a["read_sample_rate"]:  # the file's rate, as DALI gives it even when resampling
            outs.append(rates)
        if a["read_text"]:
            outs.append([np.frombuffer(m.texts[r], np.uint8).copy() for r in rows])
        if a["read_idxs"]:
            outs.append(m.indices[rows].reshape(-1, 1))
        return outs, [m.paths[r] for r in rows]

    def close(self) -> None:
        self._ahead = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        super().close()


def _outputs(args: dict) -> list[int]:
    """Which of (audio, rate, text, index) the reader gives."""
    return [0] + [k for k, flag in ((1, "read_sample_rate"), (2, "read_text"),
                                    (3, "read_idxs")) if args.get(flag)]


def _check(args: dict) -> None:
    if not args["manifest_filepaths"]:
        raise ArgumentError(f"{_FN}: argument 'manifest_filepaths' is an empty list")
    check_reader_args(_FN, args, random_with_epoch_shuffle=False)


class _ExampleManifest(Mapping):
    """The contract battery's example arguments: a manifest of two tiny WAVs, written to a
    temporary folder the first time the example is used (not when stoker is imported)."""

    def __init__(self, **extra: Any):
        self._extra = extra
        self._args: dict | None = None

    def _load(self) -> dict:
        if self._args is None:
            folder = tempfile.mkdtemp(prefix="stoker-nemo-example-")
            lines = []
            for i, n in enumerate((300, 500)):
                path = os.path.join(folder, f"{i}.wav")
                wave = (np.sin(np.arange(n) / (3 + i)) * 8000).astype(np.int16)
                pcm16_wav(wave, 8000).tofile(path)
                lines.append(json.dumps({"audio_filepath": path, "duration": n / 8000,
                                         "text": f"utterance {i}"}))
            manifest = os.path.join(folder, "manifest.json")
            with open(manifest, "w") as f:
                f.write("\n".join(lines) + "\n")
            self._args = {"manifest_filepaths": [manifest], **self._extra}
        return self._args

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"{{'manifest_filepaths': [<example manifest>], **{self._extra!r}}}"


_TYPES = [None, np.dtype(np.float32), np.dtype(np.uint8), np.dtype(np.int64)]

register(OpSchema(
    name="readers.nemo_asr",
    doc="Reads NeMo ASR manifests (JSON lines with audio_filepath, duration, offset, text) "
        "and decodes the audio: outputs the samples and, as asked, the file's sample rate "
        "(float32 scalar), the text (uint8 bytes) and the entry's index in its manifest "
        "(int64, (1,)).",
    args=(Arg("manifest_filepaths", "strs", REQUIRED, "Paths of the manifests (JSON lines)."),
          Arg("sample_rate", "float", -1.0, "Resample to this rate (-1: keep each file's)."),
          Arg("quality", "float", 50.0, "Resampling quality, 0..100.", range=(0, 100)),
          Arg("downmix", "bool", True, "Average the channels into one (output (length,))."),
          Arg("dtype", "dtype", T.FLOAT, "Output type: FLOAT, INT16 or INT32.",
              choices=(T.FLOAT, T.INT16, T.INT32)),
          Arg("min_duration", "float", 0.0, "Skip entries shorter than this (seconds, by the "
              "manifest's duration; 0: no limit)."),
          Arg("max_duration", "float", 0.0, "Skip entries longer than this (0: no limit)."),
          Arg("read_sample_rate", "bool", True, "Output each file's sample rate."),
          Arg("read_text", "bool", True, "Output each entry's text."),
          Arg("read_idxs", "bool", False, "Output each entry's index in its manifest."),
          Arg("resampler", "str", "dali", "stoker's extension: 'dali', 'soxr_hq' or "
              "'soxr_vhq' (see decoders.audio).", choices=RESAMPLERS),
          *reader_args(containers=False)),
    renamed={"normalize_text": None},
    num_outputs=lambda args: len(_outputs(args)),
    stage="source",
    instance=NemoAsrReader,
    layout=lambda layouts, args: [""] * len(_outputs(args)),
    dtype=lambda dtypes, args: [types.to_numpy(args["dtype"]) if k == 0 else _TYPES[k]
                                for k in _outputs(args)],
    check=_check,
    examples=(
        Example(args=_ExampleManifest()),
        Example(args=_ExampleManifest(read_idxs=True, sample_rate=16000.0,
                                      dtype=T.INT16, random_shuffle=True)),
        Example(args={"manifest_filepaths": []}, raises=ArgumentError,
                match="'manifest_filepaths' is an empty list"),
        Example(args=_ExampleManifest(shard_id=1), raises=ArgumentError,
                match="'shard_id' must be less than num_shards=1"),
    ),
))
