"""Random streams (the random family, ``stoker/operators/random/``, and every other draw).

``rng``: values that are a pure function of (seed, epoch, sample index), so results do
not depend on threads, chunks or batch size; ``rng_loop`` its compiled loop.
"""
