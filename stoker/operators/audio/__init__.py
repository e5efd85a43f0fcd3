"""Audio operators: decoding, resampling and the spectral and signal operators of ASR
pipelines (Jasper, QuartzNet, NeMo), and the NeMo manifest reader.

Operators: fn.decoders.audio, fn.audio_resample, fn.spectrogram, fn.mel_filter_bank,
fn.mfcc, fn.to_decibels, fn.nonsilent_region, fn.preemphasis_filter, fn.readers.nemo_asr,
fn.power_spectrum.

Modules: ``decoders`` (decoders.audio, audio_resample, and DALI's old name
experimental.audio_resample), ``spectral`` (spectrogram, mel_filter_bank, mfcc,
to_decibels), ``signal`` (nonsilent_region, preemphasis_filter), ``nemo_asr``
(readers.nemo_asr, on the readers' shared source instance), ``power_spectrum``. Kernels:
``stoker/kernels/cpu/audio/``; tests: ``tests/audio/``. ``normalize`` and ``pad``, which
the same pipelines end with, belong to the tensor family.
"""
