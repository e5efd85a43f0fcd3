"""CPU kernels of the audio family: decoding (soundfile), DALI's resampler (and soxr),
spectrograms, mel filter banks, MFCC, decibels, pre-emphasis and silence detection.

Plain functions on numpy arrays; they know nothing of graphs, schemas or threads. Loops that
numpy cannot vectorise are numba kernels that release the GIL.
"""
