"""Outputs are a pure function of (seed, epoch, sample index).

Thread count, prefetching, batch size and the run itself must not change a single byte.
"""

from __future__ import annotations

import numpy as np
import pytest

from stoker import Pipeline, fn, types

BATCH = 64  # large enough that 4 threads split dense stages into several chunks


def _sample(info: types.SampleInfo) -> np.ndarray:
    rng = np.random.default_rng(info.idx_in_epoch)
    return rng.integers(0, 255, size=(4, 6, 3), dtype=np.uint8)


def _define(pipe: Pipeline, source=None) -> None:
    with pipe:
        image = fn.external_source(source=source or _sample, batch=False, layout="HWC")
        noise = fn.random.normal(image, stddev=2.0)
        flip = fn.random.coin_flip(probability=0.3)
        gain = fn.random.uniform(range=[0.5, 1.5])
        mixed = fn.cast(image, dtype=types.FLOAT) * gain + noise * flip
        anchor, shape = fn.random_crop_generator(image.shape())
        pipe.set_outputs(mixed, fn.random.beta(alpha=2.0, beta=3.0, shape=[3]), anchor, shape,
                         fn.random.choice(image.shape(), shape=[2]))


def _make(batch_size: int = BATCH, num_threads: int = 1, seed: int = 42, source=None,
          **kwargs) -> Pipeline:
    pipe = Pipeline(batch_size=batch_size, num_threads=num_threads, seed=seed,
                    device_id=None, **kwargs)
    _define(pipe, source)
    return pipe


def _bytes(outputs) -> list[bytes]:
    return [b"".join(np.ascontiguousarray(s).tobytes() for s in tl) for tl in outputs]


def _run(pipe: Pipeline, batches: int) -> list[list[bytes]]:
    try:
        return [_bytes(pipe.run()) for _ in range(batches)]
    finally:
        pipe.close()


def test_one_and_four_threads_give_identical_bytes() -> None:
    assert _run(_make(num_threads=1), 3) == _run(_make(num_threads=4), 3)


def test_two_runs_with_same_seed_give_identical_bytes() -> None:
    assert _run(_make(num_threads=4), 3) == _run(_make(num_threads=4), 3)


def test_prefetching_does_not_change_bytes() -> None:
    sync = _run(_make(num_threads=2, exec_pipelined=False), 3)
    assert sync == _run(_make(num_threads=2, prefetch_queue_depth=3), 3)


def test_batch_size_does_not_change_sample_values() -> None:
    small = _make(batch_size=16, num_threads=2)
    try:
        runs = [small.run() for _ in range(4)]
    finally:
        small.close()
    (big,) = [_make(batch_size=64, num_threads=2).run()]
    for k, tl in enumerate(big):
        joined = [s for run in runs for s in run[k].samples()]
        assert len(joined) == len(tl)
        for j, (a, b) in enumerate(zip(joined, tl.samples(), strict=True)):
            assert a.tobytes() == b.tobytes(), f"output {k} sample {j}"


def test_different_seed_gives_different_random_values() -> None:
    a = _run(_make(seed=1), 1)[0]
    b = _run(_make(seed=2), 1)[0]
    assert all(x != y for x, y in zip(a, b, strict=True))


def test_unset_seed_draws_a_fresh_seed_per_pipeline() -> None:
    assert _make(seed=-1).seed != _make(seed=-1).seed


def _finite(epoch_batches: int, batch_size: int):
    """A re-iterable source of ``epoch_batches`` batches (the same data every epoch)."""
    return [[_sample(types.SampleInfo(k * batch_size + j, j, k, 0)) for j in range(batch_size)]
            for k in range(epoch_batches)]


def _epochs(num_threads: int, exec_pipelined: bool, epochs: int = 2) -> list:
    pipe = Pipeline(batch_size=16, num_threads=num_threads, seed=5, device_id=None,
                    exec_pipelined=exec_pipelined, prefetch_queue_depth=2)
    with pipe:
        image = fn.external_source(source=_finite(3, 16), cycle="raise")
        pipe.set_outputs(image, fn.random.uniform(image) + image)
    out = []
    try:
        for _ in range(epochs):
            while True:
                try:
                    out.append(_bytes(pipe.run()))
                except StopIteration:
                    break
            pipe.reset()
    finally:
        pipe.close()
    return out


def test_epochs_after_reset_are_deterministic_across_threads_and_prefetch() -> None:
    reference = _epochs(num_threads=1, exec_pipelined=False)
    assert len(reference) == 6
    assert _epochs(num_threads=4, exec_pipelined=True) == reference
    assert _epochs(num_threads=4, exec_pipelined=True) == reference


def test_each_epoch_draws_new_random_values_for_the_same_data() -> None:
    out = _epochs(num_threads=2, exec_pipelined=True)
    first, second = out[:3], out[3:]
    assert [b[0] for b in first] == [b[0] for b in second]  # the data repeats
    assert all(a[1] != b[1] for a, b in zip(first, second, strict=True))  # the draws do not


def test_epoch_values_do_not_depend_on_previous_epoch_length() -> None:
    def second_epoch(epoch_batches: int) -> list[bytes]:
        pipe = Pipeline(batch_size=4, num_threads=2, seed=9, device_id=None)
        with pipe:
            image = fn.external_source(source=_finite(epoch_batches, 4), cycle="raise")
            pipe.set_outputs(fn.random.normal(image))
        try:
            for _ in range(epoch_batches):
                pipe.run()
            with pytest.raises(StopIteration):
                pipe.run()
            pipe.reset()
            return _bytes(pipe.run())
        finally:
            pipe.close()

    assert second_epoch(1) == second_epoch(3)
