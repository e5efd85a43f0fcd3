"""Random streams: a pure function of (seed, sample index), shared by every random draw."""
