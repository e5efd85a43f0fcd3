"""Tiny container files (a few records each) that the readers' schema examples read, so
the contract battery runs every reader; written by ``tests/data/record/reader_samples.py``.
"""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name: str) -> str:
    """The path of sample file ``name``."""
    return os.path.join(HERE, name)
