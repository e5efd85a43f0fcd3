"""The audio cases replayed against DALI 2.4's recorded outputs (tests/data/dali_audio.npz).

One list of cases serves the recorder (tests/data/record/audio.py, run with DALI) and the
replay (tests/audio/test_audio_vs_dali.py, run with stoker): each case names an operator,
its constant arguments, its inputs (named arrays, one list of samples per input) and its
per-sample argument inputs. ``run_case`` builds the one-operator pipeline with either
library. The input signals are generated here (sweeps, noise, speech-like bursts) and also
stored in the npz, so a replay reads the very samples DALI saw.
"""

from __future__ import annotations

import io
import json
import math
import pathlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SR = 16000


def sweep(n: int = 4000, sr: int = SR, f0: float = 50.0, f1: float = 7900.0) -> np.ndarray:
    """A linear sine sweep from f0 to f1 Hz, amplitude 0.5."""
    t = np.arange(n) / sr
    phase = 2 * np.pi * (f0 * t + (f1 - f0) / (2 * t[-1]) * t * t)
    return (0.5 * np.sin(phase)).astype(np.float32)


def speech_like(n: int, seed: int, sr: int = SR) -> np.ndarray:
    """Voiced bursts (a 100-200 Hz fundamental with decaying harmonics, amplitude-modulated
    syllables) between quiet noise: what an ASR corpus sounds like to these operators."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / sr
    f0 = 100 + 100 * rng.random()
    voiced = sum(np.sin(2 * np.pi * f0 * h * t + rng.random() * 6) / h for h in range(1, 12))
    syllables = np.clip(np.sin(2 * np.pi * (2 + 3 * rng.random()) * t), 0, None) ** 2
    envelope = syllables * (t > 0.1 * t[-1]) * (t < 0.85 * t[-1])
    noise = 0.003 * rng.standard_normal(n)
    return (0.3 * voiced * envelope / 3 + noise).astype(np.float32)


def noise(n: int, seed: int, scale: float = 0.3) -> np.ndarray:
    return (scale * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)


def encode(x: np.ndarray, sr: int, fmt: str, subtype: str | None = None) -> np.ndarray:
    """``x`` written by soundfile as a file in memory, its bytes as uint8."""
    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, x, sr, format=fmt, subtype=subtype)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


@dataclass
class Case:
    name: str
    op: str
    args: dict = field(default_factory=dict)
    inputs: tuple[str, ...] = ()  # names of input batches
    arg_inputs: dict = field(default_factory=dict)  # argument -> batch name
    layouts: tuple[str | None, ...] = ()
    atol: float = 0.0  # allowed difference from DALI: atol + rtol * max|DALI sample|
    rtol: float = 0.0


def make_inputs() -> dict[str, list[np.ndarray]]:
    """Every named input batch of the cases (samples as numpy arrays)."""
    sw, sp = sweep(), speech_like(4000, 1)
    stereo = np.stack([sp[:2500], 0.5 * sweep(2500)], 1)
    silence_tail = np.concatenate([noise(3000, 5), np.zeros(17000, np.float32)])
    quiet_burst = silence_tail.copy()
    quiet_burst[12000:12100] = 0.01
    rng = np.random.default_rng(9)
    mags = np.abs(rng.standard_normal((65, 40))).astype(np.float32) ** 2
    return {
        "sweep": [sw],
        "speech2": [sp, speech_like(1500, 2)],
        "noise": [noise(3000, 3)],
        "stereo": [stereo],
        "short": [sw[:10], sw[:1]],
        "short30": [sw[:30]],
        "column": [sw[:1000, None]],
        "row": [sw[None, :1000]],
        "int16": [(sp * 20000).astype(np.int16)],
        "uint8": [np.arange(256, dtype=np.uint8)],
        "power_ft": [mags, mags[:, :7] * 3],
        "power_tf": [np.ascontiguousarray(mags.T)],
        "eye257": [np.eye(257, dtype=np.float32)],
        "eye33": [np.eye(33, dtype=np.float32)],
        "eye24": [np.eye(24, dtype=np.float32)],
        "mel_like": [np.abs(rng.standard_normal((20, 30))).astype(np.float32) * 10,
                     np.abs(rng.standard_normal((20, 12))).astype(np.float32)],
        "zeros": [np.zeros((3, 4), np.float32)],
        "silence_tail": [silence_tail],
        "quiet_burst": [quiet_burst],
        "all_silent": [np.zeros(5000, np.float32)],
        "ramp5": [np.arange(1, 6, dtype=np.float32), np.arange(10, 0, -2, dtype=np.float32)],
        "one": [np.array([3.0], np.float32)],
        "pair2d": [np.stack([np.arange(1, 6), 10 * np.arange(1, 6)], 1).astype(np.float32)],
        "coeffs": [np.float32(0.5), np.float32(0.1)],
        "rates": [np.float32(8000.0), np.float32(22050.0)],
        "scales": [np.float32(0.5), np.float32(1.37)],
        "lengths": [np.int64(100), np.int64(2500)],
        "wav16": [encode(sp, SR, "WAV", "PCM_16")],
        "wav_float_stereo": [encode(stereo, SR, "WAV", "FLOAT")],
        "wav24": [encode(sw, 22050, "WAV", "PCM_24")],
        "flac_stereo": [encode(stereo, SR, "FLAC")],
        "ogg_stereo": [encode(stereo, SR, "OGG", "VORBIS")],
        "opus": [encode(sp, 48000, "OGG", "OPUS")],
        "files2": [encode(sp, SR, "WAV", "PCM_16"), encode(stereo, 22050, "FLAC")],
        "wav_empty": [encode(np.zeros(0, np.float32), SR, "WAV", "PCM_16")],
    }


# DALI's resampler: stoker rounds each output's table position once where DALI rounds it
# per tap (stoker/kernels/cpu/audio/resample.py): within 1e-5 for samples in [-1, 1].
RESAMPLED = 1e-5
# libvorbis and libopus differ between DALI's libsndfile and soundfile's by a float32 step;
# libsndfile then scales to int32 by 2**31.
LOSSY_INT32 = 512


def _c(name: str, op: str, inputs: tuple, **kw: Any) -> Case:
    return Case(name, op, inputs=inputs, **kw)


CASES = [
    # decoders.audio
    *[_c(f"decode_{src}_{tag}", "decoders.audio", (src,), args=args,
         atol=(LOSSY_INT32 if tag == "int32" else 1e-6) if src in ("ogg_stereo", "opus")
         else 0.0)
      for src in ("wav16", "wav_float_stereo", "wav24", "flac_stereo", "ogg_stereo", "opus")
      for tag, args in (("plain", {}), ("downmix", {"downmix": True}),
                        ("int16", {"dtype": "INT16"}), ("int32", {"dtype": "INT32"}))],
    _c("decode_resample_8k", "decoders.audio", ("files2",), args={"sample_rate": 8000.0},
       atol=RESAMPLED),
    _c("decode_resample_down_q0", "decoders.audio", ("files2",),
       args={"sample_rate": 12345.0, "quality": 0.0, "downmix": True}, atol=RESAMPLED),
    _c("decode_resample_up_q100_int16", "decoders.audio", ("files2",),
       args={"sample_rate": 44100.0, "quality": 100.0, "dtype": "INT16"}, atol=1),
    _c("decode_resample_per_sample", "decoders.audio", ("files2",),
       arg_inputs={"sample_rate": "rates"}, args={"downmix": True}, atol=RESAMPLED),
    _c("decode_empty", "decoders.audio", ("wav_empty",)),
    # audio_resample
    _c("resample_rates", "audio_resample", ("sweep",), args={"in_rate": 16000.0,
                                                             "out_rate": 22050.0},
       atol=RESAMPLED),
    _c("resample_scale_down", "audio_resample", ("speech2",), args={"scale": 0.37},
       atol=RESAMPLED),
    _c("resample_out_length", "audio_resample", ("speech2",), args={"out_length": 777},
       atol=RESAMPLED),
    _c("resample_scale_per_sample", "audio_resample", ("speech2",),
       arg_inputs={"scale": "scales"}, atol=RESAMPLED),
    _c("resample_length_per_sample", "audio_resample", ("speech2",),
       arg_inputs={"out_length": "lengths"}, args={"quality": 10.0}, atol=RESAMPLED),
    _c("resample_stereo", "audio_resample", ("stereo",), args={"scale": 1.6, "quality": 80.0},
       atol=RESAMPLED),
    _c("resample_int16_to_float", "audio_resample", ("int16",),
       args={"scale": 0.5, "dtype": "FLOAT"}, atol=RESAMPLED),
    _c("resample_int16", "audio_resample", ("int16",), args={"scale": 0.8}, atol=1),
    _c("resample_uint8_to_float", "audio_resample", ("uint8",),
       args={"scale": 1.0, "dtype": "FLOAT", "quality": 0.0}),
    _c("resample_to_uint8", "audio_resample", ("speech2",), args={"scale": 0.9,
                                                                  "dtype": "UINT8"}, atol=1),
    _c("resample_to_int32", "audio_resample", ("speech2",), args={"scale": 0.9,
                                                                  "dtype": "INT32"},
       atol=RESAMPLED * 2**31),
    # spectrogram
    _c("spec_default", "spectrogram", ("speech2",), rtol=1e-5),
    _c("spec_small", "spectrogram", ("speech2",),
       args={"window_length": 64, "window_step": 16}, rtol=1e-5),
    _c("spec_odd_window", "spectrogram", ("sweep",),
       args={"window_length": 63, "window_step": 17, "nfft": 100}, rtol=1e-5),
    _c("spec_power1_tf", "spectrogram", ("speech2",),
       args={"window_length": 200, "window_step": 80, "nfft": 256, "power": 1,
             "layout": "tf"}, rtol=1e-5),
    _c("spec_no_center", "spectrogram", ("speech2",),
       args={"window_length": 128, "window_step": 50, "center_windows": False}, rtol=1e-5),
    _c("spec_zero_pad", "spectrogram", ("speech2",),
       args={"window_length": 128, "window_step": 50, "reflect_padding": False}, rtol=1e-5),
    _c("spec_window_fn", "spectrogram", ("sweep",),
       args={"window_length": 8, "window_step": 24, "nfft": 16,
             "window_fn": [0.1, 0.5, 1.0, 0.7, 0.3, 0.2, 0.1, 0.05]}, rtol=1e-5),
    _c("spec_short_reflect", "spectrogram", ("short",),
       args={"window_length": 64, "window_step": 16}, rtol=1e-5),
    _c("spec_short_no_center", "spectrogram", ("short30",),
       args={"window_length": 64, "center_windows": False}, rtol=1e-5),
    _c("spec_column", "spectrogram", ("column",), args={"window_length": 64}, rtol=1e-5),
    _c("spec_row", "spectrogram", ("row",), args={"window_length": 64}, rtol=1e-5),
    # mel_filter_bank (an identity input gives the filters themselves)
    *[_c(f"mel_{tag}", "mel_filter_bank", (src,), args=args, layouts=("ft",), rtol=2e-5)
      for tag, src, args in (
          ("default", "eye257", {}),
          ("peak", "eye257", {"normalize": False}),
          ("htk", "eye257", {"mel_formula": "htk"}),
          ("htk_peak", "eye33", {"mel_formula": "htk", "normalize": False}),
          ("band", "eye257", {"freq_low": 300.0, "freq_high": 6000.0, "sample_rate": 16000.0,
                              "nfilter": 40}),
          ("asr", "eye257", {"sample_rate": 16000.0, "nfilter": 64}),
          ("above_nyquist", "eye33", {"sample_rate": 16000.0, "nfilter": 20,
                                      "freq_high": 9000.0}))],
    _c("mel_on_power", "mel_filter_bank", ("power_ft",),
       args={"sample_rate": 16000.0, "nfilter": 20}, layouts=("ft",), rtol=2e-5),
    _c("mel_tf", "mel_filter_bank", ("power_tf",),
       args={"sample_rate": 16000.0, "nfilter": 20}, layouts=("tf",), rtol=2e-5),
    _c("mel_no_layout", "mel_filter_bank", ("power_ft",), args={"nfilter": 10}, rtol=2e-5),
    # mfcc
    *[_c(f"mfcc_{tag}", "mfcc", ("eye24",), args=args, layouts=("ft",), atol=1e-7, rtol=2e-7)
      for tag, args in (
          ("default", {}), ("all", {"n_mfcc": 30}), ("dct1", {"dct_type": 1}),
          ("dct3", {"dct_type": 3}), ("dct4", {"dct_type": 4}),
          ("ortho", {"normalize": True}), ("ortho3", {"dct_type": 3, "normalize": True}),
          ("ortho4", {"dct_type": 4, "normalize": True}), ("lifter", {"lifter": 22.0}),
          ("axis1", {"axis": 1, "n_mfcc": 5}))],
    _c("mfcc_on_mel", "mfcc", ("mel_like",), args={"n_mfcc": 13, "lifter": 5.0},
       layouts=("ft",), atol=1e-5, rtol=1e-6),
    # to_decibels
    _c("db_default", "to_decibels", ("power_ft",), atol=2e-5),
    _c("db_asr", "to_decibels", ("power_ft",),
       args={"multiplier": float(np.log(10)), "reference": 1.0,
             "cutoff_db": float(np.log(1e-20))}, atol=2e-5),
    _c("db_cutoff", "to_decibels", ("mel_like",), args={"cutoff_db": -3.0,
                                                        "multiplier": 20.0}, atol=2e-5),
    _c("db_zeros", "to_decibels", ("zeros",), atol=2e-5),
    # nonsilent_region
    _c("ns_speech", "nonsilent_region", ("speech2",), args={"window_length": 256,
                                                            "cutoff_db": -30.0}),
    _c("ns_residue", "nonsilent_region", ("silence_tail",)),
    _c("ns_quiet_burst", "nonsilent_region", ("quiet_burst",)),
    _c("ns_quiet_burst_ref", "nonsilent_region", ("quiet_burst",),
       args={"reference_power": 1.0}),
    _c("ns_small_window", "nonsilent_region", ("quiet_burst",),
       args={"window_length": 100, "reset_interval": 1000}),
    _c("ns_no_reset", "nonsilent_region", ("quiet_burst",), args={"reset_interval": -1}),
    _c("ns_silent", "nonsilent_region", ("all_silent",)),
    _c("ns_short", "nonsilent_region", ("short30",)),
    _c("ns_int16", "nonsilent_region", ("int16",), args={"cutoff_db": -20.0,
                                                         "window_length": 512}),
    # preemphasis_filter
    *[_c(f"pe_{border}", "preemphasis_filter", ("ramp5",),
         args={"border": border, "preemph_coeff": 0.5}) for border in
      ("clamp", "zero", "reflect")],
    _c("pe_per_sample", "preemphasis_filter", ("ramp5",), arg_inputs={"preemph_coeff": "coeffs"}),
    _c("pe_one_reflect", "preemphasis_filter", ("one",), args={"border": "reflect"}),
    _c("pe_2d", "preemphasis_filter", ("pair2d",), args={"preemph_coeff": 0.5}),
    _c("pe_int16_in", "preemphasis_filter", ("int16",)),
    _c("pe_to_int16", "preemphasis_filter", ("speech2",), args={"dtype": "INT16"}),
    _c("pe_to_uint8", "preemphasis_filter", ("ramp5",), args={"dtype": "UINT8"}),
    # normalize and pad as the ASR pipelines use them
    _c("norm_jasper", "normalize", ("mel_like",), args={"axes": [1]}, layouts=("ft",),
       atol=1e-5),
    _c("norm_nemo", "normalize", ("mel_like",), args={"axes": [1], "epsilon": 1e-10,
                                                     "ddof": 1}, layouts=("ft",), atol=1e-5),
    _c("norm_nemo_all", "normalize", ("mel_like",), args={"axes": [0, 1], "ddof": 1,
                                                         "epsilon": 1e-10}, atol=1e-5),
    _c("pad_align", "pad", ("mel_like",), args={"axes": [1], "fill_value": 0.0, "align": 16},
       layouts=("ft",)),
    _c("pad_nemo", "pad", ("mel_like",), args={"axes": [0, 1], "fill_value": -1.0,
                                              "align": [8, 1], "shape": [1, -1]},
       layouts=("ft",)),
]


def dali_type(types: Any, value: Any) -> Any:
    return getattr(types, value) if isinstance(value, str) and value.isupper() else value


def run_case(lib: Any, case: Case, inputs: dict[str, list[np.ndarray]]) -> dict:
    """One run of ``case`` with ``lib`` (stoker or DALI's modules: fn, types, Pipeline):
    {"outputs": [[sample arrays] per output], "layouts": [...]} or {"error": (stage, text)}."""
    fn, types = lib.fn, lib.types
    batch = len(inputs[case.inputs[0]])
    pipe = lib.Pipeline(batch_size=batch, num_threads=1, device_id=None, seed=7)
    stage = "call"
    try:
        with pipe:
            nodes = [fn.external_source(source=[inputs[name]], cycle=True,
                                        layout=case.layouts[i] if i < len(case.layouts)
                                        else None)
                     for i, name in enumerate(case.inputs)]
            kwargs = {k: dali_type(types, v) for k, v in case.args.items()}
            for arg, name in case.arg_inputs.items():
                kwargs[arg] = fn.external_source(source=[inputs[name]], cycle=True)
            op = fn
            for part in case.op.split("."):
                op = getattr(op, part)
            outs = op(*nodes, **kwargs)
            outs = list(outs) if isinstance(outs, list | tuple) else [outs]
            pipe.set_outputs(*outs)
        stage = "build"
        pipe.build()
        stage = "run"
        got = pipe.run()
    except Exception as e:  # noqa: BLE001  (the outcome is the error)
        return {"error": (stage, f"{type(e).__name__}: {e}")}
    return {"outputs": [[np.array(t.at(i)) for i in range(len(t))] for t in got],
            "layouts": [str(t.layout() or "") for t in got]}


# -- DALI's ASR feature pipeline and the nemo_asr manifest ----------------------------------


def asr_pipeline(lib, files, rates):  # noqa: ANN001, ANN201
    """DALI's Jasper feature pipeline (DeepLearningExamples), rates per sample."""
    fn_, types_ = lib.fn, lib.types
    pipe = lib.Pipeline(batch_size=len(files), num_threads=1, device_id=None, seed=7)
    with pipe:
        encoded = fn_.external_source(source=[files], cycle=True)
        rate = fn_.external_source(source=[rates], cycle=True)
        audio, _ = fn_.decoders.audio(encoded, sample_rate=rate, dtype=types_.FLOAT,
                                      downmix=True)
        pre = fn_.preemphasis_filter(audio, preemph_coeff=0.97)
        spec = fn_.spectrogram(pre, nfft=512, window_length=320, window_step=160)
        mel = fn_.mel_filter_bank(spec, sample_rate=16000.0, nfilter=64, normalize=True)
        db = fn_.to_decibels(mel, multiplier=math.log(10), reference=1.0,
                             cutoff_db=math.log(1e-20))
        norm = fn_.normalize(db, axes=[1])
        padded = fn_.pad(norm, axes=[1], fill_value=0, align=16)
        pipe.set_outputs(audio, pre, spec, mel, db, norm, padded)
    return pipe


ASR_STAGES = ("audio", "preemphasis", "spectrogram", "mel", "decibels", "normalize", "pad")
# The stages stored (the others have cases of their own; this keeps the file small).
ASR_STORED = ("audio", "mel", "pad")


def asr_inputs() -> tuple[list[np.ndarray], list[np.ndarray]]:
    files = [encode(speech_like(n, 20 + i), SR, "WAV", "PCM_16")
             for i, n in enumerate((7000, 9000, 4000))]
    rates = [np.float32(SR * s) for s in (0.9, 1.0, 1.1)]
    return files, rates


NEMO_SR = 8000  # the manifest's files: a low rate keeps the recording small


def nemo_files() -> dict[str, np.ndarray]:
    """The audio of the manifest's files (name -> samples; stereo ones 2-D)."""
    ramp = (np.arange(NEMO_SR) / NEMO_SR).astype(np.float32)
    return {"ramp.wav": ramp, "speech.wav": speech_like(NEMO_SR // 2, 30, NEMO_SR),
            "stereo.flac": np.stack([ramp[:6000], -0.5 * ramp[:6000]], 1)}


def nemo_rows() -> list:
    """Manifest lines ({"audio_filepath": <name>} is made absolute when written)."""
    return [
        {"audio_filepath": "ramp.wav", "duration": 1.0, "text": "plain text"},
        "not json",
        {"audio_filepath": "speech.wav", "duration": 0.3, "offset": 0.10003,
         "text": "h\u00e9llo \u00fcn\u00efcode"},
        {"duration": 1.0, "text": "no path"},
        {"audio_filepath": "ramp.wav", "duration": 0.30003, "offset": 0.1, "text": ""},
        {"audio_filepath": "ramp.wav", "offset": 0.75, "text": "no duration"},
        {"audio_filepath": "stereo.flac", "duration": 1.0, "offset": 0.5, "text": "stereo"},
        {"audio_filepath": "speech.wav", "duration": 0.5, "text": "whole"},
    ]


NEMO_CASES = {
    "nemo_default": {},
    "nemo_idxs": {"read_idxs": True, "read_text": False, "read_sample_rate": False},
    "nemo_min": {"min_duration": 0.3, "read_idxs": True},
    "nemo_max": {"max_duration": 0.3, "read_idxs": True},
    "nemo_range": {"min_duration": 0.5, "max_duration": 1.0},
    "nemo_no_downmix": {"downmix": False, "read_text": False},
    "nemo_int16": {"dtype": "INT16", "read_text": False},
    "nemo_resample": {"sample_rate": 6000.0, "read_text": False, "quality": 20.0},
}


def write_manifest(folder: pathlib.Path) -> str:
    import soundfile

    for name, x in nemo_files().items():
        soundfile.write(folder / name, x, NEMO_SR,
                        subtype="FLOAT" if name.endswith("wav") else None)
    path = folder / "manifest.json"
    with open(path, "w", encoding="utf-8") as f:
        for row in nemo_rows():
            if isinstance(row, dict) and "audio_filepath" in row:
                row = {**row, "audio_filepath": str(folder / row["audio_filepath"])}
            f.write((json.dumps(row, ensure_ascii=False) if isinstance(row, dict) else row)
                    + "\n")
    return str(path)


def nemo_pipeline(lib, manifest, args, batch):  # noqa: ANN001, ANN201
    pipe = lib.Pipeline(batch_size=batch, num_threads=1, device_id=None, seed=7)
    with pipe:
        kwargs = {k: getattr(lib.types, v) if isinstance(v, str) and v.isupper() else v
                  for k, v in args.items()}
        outs = lib.fn.readers.nemo_asr(manifest_filepaths=[manifest], name="Reader", **kwargs)
        pipe.set_outputs(*(outs if isinstance(outs, list | tuple) else [outs]))
    return pipe
