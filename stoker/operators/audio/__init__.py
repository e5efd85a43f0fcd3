"""The audio family: decoding, resampling and the spectral and signal operators of ASR
pipelines (Jasper, QuartzNet, NeMo), and the NeMo manifest reader.

- ``decoders``: ``decoders.audio``, ``audio_resample`` (and DALI's old name
  ``experimental.audio_resample``);
- ``spectral``: ``spectrogram``, ``mel_filter_bank``, ``mfcc``, ``to_decibels``;
- ``signal``: ``nonsilent_region``, ``preemphasis_filter``;
- ``nemo_asr``: ``readers.nemo_asr``.

Kernels: ``stoker/kernels/cpu/audio/``. ``normalize`` and ``pad``, which the same pipelines
end with, belong to their own families.
"""
