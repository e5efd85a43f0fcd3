"""What automatic augmentations are made of: ``@augmentation`` turns a function
``op(data, parameter, **extra)`` into an ``Augmentation`` that takes a magnitude bin
instead of the parameter; ``signed_bin`` pairs bins with random signs; ``select`` applies
the augmentation a per-sample index picks; ``Policy`` is an AutoAugment policy.

Parameters are precomputed for every bin (and sign): ``mag_to_param`` of
``linspace(lo, hi, num_magnitude_bins)`` (float32), negated for odd signed indices,
stored as one constant node that each sample indexes with its bin, as DALI does.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stoker import fn, types
from stoker.graph.node import DataNode, user_frame
from stoker.pipeline.conditionals.runtime import if_stmt


class _Unset:
    pass


_UNSET: Any = _Unset


class SignedBin:
    """Magnitude bins with a random sign per sample: ``signed_idx = 2 * bin + sign``."""

    def __init__(self, magnitude_bin: int | DataNode, random_sign: DataNode,
                 signed_idx: DataNode):
        self.bin = magnitude_bin
        self.random_sign = random_sign
        self.signed_magnitude_idx = signed_idx

    def __getitem__(self, k: int) -> SignedBin:
        bin_k = self.bin if isinstance(self.bin, int) else self.bin[k]
        return SignedBin(bin_k, self.random_sign[k], self.signed_magnitude_idx[k])


def signed_bin(magnitude_bin: int | DataNode, random_sign: DataNode | None = None,
               seed: int | None = None, shape: tuple | None = None) -> SignedBin:
    if not isinstance(magnitude_bin, int | DataNode):
        raise TypeError(f"signed_bin: 'magnitude_bin' must be an int or a DataNode of ints, "
                        f"got {magnitude_bin!r}")
    if random_sign is not None and (seed is not None or shape is not None):
        raise ValueError("signed_bin: 'random_sign' excludes 'seed' and 'shape'")
    if random_sign is None:
        random_sign = fn.random.uniform(values=[0, 1], dtype=types.INT32, seed=_seed(seed),
                                        shape=shape)
    return SignedBin(magnitude_bin, random_sign, 2 * magnitude_bin + random_sign)


def _seed(seed: int | None) -> int:
    return -1 if seed is None else seed


def _as_param(value: Any) -> np.ndarray:
    if isinstance(value, DataNode) or (isinstance(value, list | tuple) and
                                       any(isinstance(v, DataNode) for v in value)):
        raise TypeError("an augmentation's mag_to_param must return arrays (they are "
                        "precomputed for every magnitude bin), not DataNodes")
    return np.array(value)


class Augmentation:
    def __init__(self, op: Callable, mag_range: Any = None, randomly_negate: bool | None = None,
                 mag_to_param: Callable | None = None, param_device: str | None = None,
                 name: str | None = None):
        params = [p for p in inspect.signature(op).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) < 2:
            raise TypeError(f"@augmentation: {op.__name__} must take at least two positional "
                            "arguments: the samples and the parameter")
        self.op = op
        self.mag_range = mag_range
        self.randomly_negate = bool(randomly_negate)
        self._negate_given = randomly_negate
        self.mag_to_param = mag_to_param or np.array
        self._mag_to_param_given = mag_to_param
        self.param_device = param_device or "cpu"
        self._param_device_given = param_device
        self.name = name or op.__name__
        self._name_given = name

    def __repr__(self) -> str:
        return f"Augmentation({self.name}, mag_range={self.mag_range!r}, " \
               f"randomly_negate={self.randomly_negate})"

    def augmentation(self, mag_range: Any = _UNSET, randomly_negate: Any = _UNSET,
                     mag_to_param: Any = _UNSET, param_device: Any = _UNSET,
                     name: Any = _UNSET) -> Augmentation:
        """A copy with some settings replaced."""
        def pick(new: Any, old: Any) -> Any:
            return old if new is _UNSET else new
        return Augmentation(self.op, pick(mag_range, self.mag_range),
                            pick(randomly_negate, self._negate_given),
                            pick(mag_to_param, self._mag_to_param_given),
                            pick(param_device, self._param_device_given),
                            pick(name, self._name_given))

    def magnitudes(self, num_magnitude_bins: int | None) -> np.ndarray | None:
        if self.mag_range is None:
            return None
        if isinstance(self.mag_range, np.ndarray):
            if num_magnitude_bins is not None and len(self.mag_range) != num_magnitude_bins:
                raise ValueError(f"augmentation {self.name!r}: {len(self.mag_range)} explicit "
                                 f"magnitudes, but num_magnitude_bins={num_magnitude_bins}")
            return self.mag_range
        if num_magnitude_bins is None:
            raise ValueError(f"augmentation {self.name!r}: give num_magnitude_bins with the "
                             "magnitude bin")
        lo, hi = self.mag_range
        return np.linspace(lo, hi, num_magnitude_bins, dtype=np.float32)

    def _params(self, magnitudes: Sequence[float]) -> np.ndarray:
        params = [_as_param(self.mag_to_param(m)) for m in magnitudes]
        first = params[0]
        for p, m in zip(params, magnitudes, strict=True):
            if p.shape != first.shape or p.dtype != first.dtype:
                raise ValueError(f"augmentation {self.name!r}: mag_to_param gives {first.dtype}"
                                 f"{list(first.shape)} for magnitude {magnitudes[0]} but "
                                 f"{p.dtype}{list(p.shape)} for {m}; all must agree")
        return np.array(params)

    def parameter(self, magnitude_bin: Any, num_magnitude_bins: int | None) -> Any:
        magnitudes = self.magnitudes(num_magnitude_bins)
        if magnitudes is None:
            return None
        if magnitude_bin is None:
            raise ValueError(f"augmentation {self.name!r} has a magnitude range: call it with "
                             "magnitude_bin=")
        if self.randomly_negate:
            if not isinstance(magnitude_bin, SignedBin):
                warnings.warn(f"augmentation {self.name!r} negates magnitudes at random, but "
                              "got an unsigned magnitude_bin: it draws the signs itself "
                              "(pass signed_bin(...) made before a split instead)", stacklevel=3)
                magnitude_bin = signed_bin(magnitude_bin)
            if isinstance(magnitude_bin.bin, int):
                magnitudes, index = [magnitudes[magnitude_bin.bin]], magnitude_bin.random_sign
            else:
                index = magnitude_bin.signed_magnitude_idx
            signed = np.array([m if k % 2 == 0 else -m
                               for m in magnitudes for k in range(2)])
            return types.Constant(self._params(signed))[index]
        plain = magnitude_bin.bin if isinstance(magnitude_bin, SignedBin) else magnitude_bin
        if isinstance(plain, int):
            return types.Constant(_as_param(self.mag_to_param(magnitudes[plain])))
        return types.Constant(self._params(magnitudes))[plain]

    def __call__(self, data: DataNode, *, magnitude_bin: Any = None,
                 num_magnitude_bins: int | None = None, **kwargs: Any) -> DataNode:
        param = self.parameter(magnitude_bin, num_magnitude_bins)
        signature = inspect.signature(self.op).parameters
        extra = {k: v for k, v in kwargs.items() if k in list(signature)[2:]}
        missing = [name for name, p in list(signature.items())[2:]
                   if p.default is inspect.Parameter.empty and p.kind in (
                       p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name not in kwargs]
        if missing:
            raise MissingArgError(self, missing)
        return self.op(data, param, **extra)


class MissingArgError(TypeError):
    def __init__(self, augmentation: Augmentation, missing: list[str]):
        super().__init__(f"augmentation {augmentation.name!r} needs argument(s) "
                         f"{', '.join(missing)}, not given to the call")
        self.augmentation = augmentation
        self.missing_args = missing


def augmentation(function: Callable | None = None, *, mag_range: Any = None,
                 randomly_negate: bool | None = None, mag_to_param: Callable | None = None,
                 param_device: str | None = None, name: str | None = None) -> Any:
    """Decorator: ``op(data, parameter, ...)`` -> an ``Augmentation`` taking magnitude bins."""
    def wrap(op: Callable) -> Augmentation:
        return Augmentation(op, mag_range, randomly_negate, mag_to_param, param_device, name)
    return wrap(function) if function is not None else wrap


def select(augmentations: Sequence[Augmentation], index: DataNode, *args: Any,
           **kwargs: Any) -> DataNode:
    """``augmentations[index](*args, **kwargs)`` per sample: the batch is split in halves by
    index (an ``if`` per level), so each augmentation runs on its samples only."""
    where = user_frame()

    def pick(lo: int, hi: int) -> DataNode:
        if lo == hi:
            return augmentations[lo](*args, **kwargs)
        mid = (lo + hi) // 2
        return if_stmt(index <= mid, lambda: (pick(lo, mid),), lambda: (pick(mid + 1, hi),),
                       ("augmented",), (), where)[0]

    return pick(0, len(augmentations) - 1)


def check_unused(augmentations: Sequence[Augmentation], kwargs: dict, call: str) -> None:
    used = {name for aug in augmentations for name in
            list(inspect.signature(aug.op).parameters)[2:]}
    unused = sorted(set(kwargs) - used)
    if unused:
        raise TypeError(f"{call}: argument(s) {', '.join(unused)} are used by none of the "
                        "augmentations")


class Policy:
    """An AutoAugment policy: sub-policies of (augmentation, probability, magnitude bin)."""

    def __init__(self, name: str, num_magnitude_bins: int,
                 sub_policies: Sequence[Sequence[tuple[Augmentation, float, int | None]]]):
        if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
            raise ValueError(f"Policy: num_magnitude_bins must be a positive integer, got "
                             f"{num_magnitude_bins!r}")
        for sub in sub_policies:
            for entry in sub:
                if not isinstance(entry, list | tuple) or len(entry) != 3:
                    raise ValueError(f"Policy: each step is (augmentation, probability, "
                                     f"magnitude bin), got {entry!r}")
                aug, p, mag = entry
                if not isinstance(aug, Augmentation):
                    raise TypeError(f"Policy: {aug!r} is not an Augmentation")
                if not 0 <= p <= 1:
                    raise ValueError(f"Policy: probability {p} is not in [0, 1]")
                if mag is not None and not 0 <= mag < num_magnitude_bins:
                    raise ValueError(f"Policy: magnitude bin {mag} is not in [0, "
                                     f"{num_magnitude_bins - 1}]")
                if aug.mag_range is not None and mag is None:
                    raise ValueError(f"Policy: {aug.name!r} needs a magnitude bin")
        self.name = name
        self.num_magnitude_bins = num_magnitude_bins
        self.sub_policies = [list(sub) for sub in sub_policies]

    @property
    def augmentations(self) -> dict[str, Augmentation]:
        return {aug.name: aug for sub in self.sub_policies for aug, _, _ in sub}

    def __repr__(self) -> str:
        return f"Policy({self.name!r}, {len(self.sub_policies)} sub-policies)"
