"""Error classes. Each subclasses the builtin it resembles, so ``except ValueError`` still works."""

from __future__ import annotations


class StokerError(Exception):
    """Base of every error stoker raises on purpose."""


class ArgumentError(StokerError, ValueError, RuntimeError):
    """An operator argument has a wrong value: names operator, argument, value and rule.

    Also a RuntimeError: DALI finds bad values in its C++ operators, at build or run, and
    raises RuntimeError there; stoker finds them at the call, and ``except RuntimeError``
    written for DALI still catches them."""


class ArgumentTypeError(StokerError, TypeError):
    """An operator argument has a wrong type, or is unknown."""


class MissingArgumentError(ArgumentTypeError, RuntimeError):
    """A required operator argument is not given: a TypeError, as for a Python call, and a
    RuntimeError, as DALI raises at build."""


class GraphError(StokerError, ValueError):
    """The pipeline graph is malformed (foreign node, bad output, forbidden device edge)."""


class ShapeError(StokerError, ValueError, RuntimeError):
    """A batch or a tensor cannot take the shape asked for: samples of different shapes
    as one array, an axis out of range. DALI raises RuntimeError there; a ValueError too,
    as stoker raised first."""


class DeviceError(StokerError, RuntimeError):
    """A device was asked for that this machine or build does not provide."""


class PipelineError(StokerError, RuntimeError):
    """Misuse of a pipeline's life cycle (run before build, run after close, ...)."""


class SampleError(StokerError, RuntimeError):
    """An operator failed on a sample at run time.

    The message names the operator, the line of the user's pipeline that created it, and
    the sample's source (file path or index); ``__cause__`` holds the original exception.
    """

    def __init__(self, message: str, *, op: str = "", source: str = "", where: str = ""):
        super().__init__(message)
        self.op = op
        self.source = source
        self.where = where


class IndexWarning(UserWarning):
    """A reader indexed files that came without an index (DALI requires one): the index
    tool's command saves that time at the next start."""


class GpuFallbackWarning(UserWarning):
    """GPU operators were asked for where no GPU is usable; they run on the CPU instead."""
