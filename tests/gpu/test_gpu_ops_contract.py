"""The GPU battery: every operator with a ``gpu_kernel`` runs its schema's valid examples
on both devices (the GPU kernel on torch CPU tensors, dense and ragged), with the outputs'
types as predicted and values within the published tolerance of the CPU operator's.

``TOLERANCE`` is the README's table "GPU operators: tolerance against the CPU operators";
an operator that gains a gpu_kernel must be added to it (the last test checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_ops_helpers import both

import stoker.fn  # noqa: F401  (registers every operator family)
from stoker.operators.machinery.registry import REGISTRY, call_op

pytest.importorskip("torch")

# Largest difference allowed, (integer outputs, float outputs relative to the value range).
EXACT = (0, 0.0)
RESAMPLING = (1, 1e-6)
TOLERANCE = {
    "crop": EXACT, "flip": EXACT, "crop_mirror_normalize": EXACT, "cast": EXACT,
    "cast_like": EXACT, "transpose": EXACT, "pad": EXACT, "_arith": EXACT,
    "brightness": EXACT, "contrast": EXACT, "brightness_contrast": EXACT, "hue": EXACT,
    "saturation": EXACT, "hsv": EXACT, "color_twist": EXACT, "color_space_conversion": EXACT,
    "resize": RESAMPLING, "resize_crop_mirror": RESAMPLING, "random_resized_crop": RESAMPLING,
    "normalize": (1, 1e-6),
}
# Operators on device="gpu" that also run on the CPU (mixed decoders and device moves have
# their own tests: tests/gpu/test_gpu_pipeline*.py).
GPU_NAMES = sorted(n for n, s in REGISTRY.items()
                   if s.gpu_kernel is not None and "gpu" in s.devices and "cpu" in s.devices)


def _cases():
    for name in GPU_NAMES:
        for k, example in enumerate(e for e in REGISTRY[name].examples if e.raises is None):
            for dense in (True, False):
                yield pytest.param(name, example, dense, id=f"{name}-{k}-{dense and 'dense'}")


@pytest.mark.parametrize(("name", "example", "dense"), list(_cases()))
def test_gpu_kernel_matches_cpu_on_schema_examples(name, example, dense):
    schema = REGISTRY[name]
    args = dict(example.args)
    if schema.random:
        args.setdefault("seed", 99)
    b = both(lambda *nodes: call_op(name, list(nodes), args), *example.inputs, dense=dense)
    int_tol, float_tol = TOLERANCE[name]
    for k in range(len(b.cpu)):
        for c, g in zip(b.cpu[k], b.gpu[k], strict=True):
            assert c.dtype == g.dtype and c.shape == g.shape, (c.dtype, g.dtype, c.shape,
                                                               g.shape)
            if c.dtype.kind in "iub":
                assert np.abs(c.astype(np.int64) - g.astype(np.int64)).max(initial=0) <= int_tol
            else:
                scale = float(np.nanmax(np.abs(c), initial=1.0))
                np.testing.assert_allclose(g, c, atol=float_tol * max(scale, 1.0), rtol=0)


def test_every_gpu_operator_has_a_published_tolerance():
    assert sorted(TOLERANCE) == GPU_NAMES
