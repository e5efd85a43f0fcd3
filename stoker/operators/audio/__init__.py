"""Audio operators (none yet).

Operators: none yet.

Here go decoders.audio, spectrogram, mel_filter_bank, mfcc, to_decibels, nonsilent_region
and audio_resample, with their kernels in ``stoker/kernels/cpu/audio/`` (and
``stoker/kernels/gpu/audio/``) and their tests in ``tests/audio/``.
"""
