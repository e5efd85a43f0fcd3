"""How the executor cuts a batch into chunks for its threads."""

from __future__ import annotations

import numpy as np
import pytest

from stoker import fn, pipeline_def
from stoker.errors import SampleError


def _pipe(threads: int):
    @pipeline_def(batch_size=64, num_threads=threads, device_id=None, seed=3)
    def pipe():
        x = fn.external_source(source=lambda: [np.zeros((4, 5 + i % 3, 3), np.uint8)
                                                for i in range(64)], layout="HWC")
        return fn.resize(fn.flip(x, horizontal=fn.random.coin_flip()), size=[3, 4])  # per sample

    p = pipe()
    p.build()
    return p


def _image_stage(p):
    return next(s for s in p._plan.stages if s.kind == "sample" and
                any(op.schema.name == "resize" for op in s.ops))


def test_batch_draws_run_once_per_batch_when_the_stage_is_split():
    """coin_flip has no inputs: a split stage draws the batch once, before its chunks
    (each would call it again); a stage run whole calls it inside. Same values."""
    calls, chunks = [], []

    def run(threads: int, whole: bool):
        p = _pipe(threads)
        ex = p._runtime.executor
        stage = _image_stage(p)
        assert [op.schema.name for op in stage.early] == ["random.coin_flip"]
        flip = next(i for op, i in ex.instances.items() if op.schema.name == "random.coin_flip")
        real = flip.run_chunk
        flip.run_chunk = lambda ins, argv, ctx: calls.append(ctx.n) or real(ins, argv, ctx)
        resize = next(i for op, i in ex.instances.items() if op.schema.name == "resize")
        real_resize = resize.run_chunk
        resize.run_chunk = lambda ins, argv, ctx: chunks.append(ctx.n) or real_resize(
            ins, argv, ctx)
        ex._cost[id(stage)] = 1e-6 if whole else 1e-3  # (1 ms per sample: split it)
        ex.WHOLE_BATCH_SECONDS = 1.0 if whole else 0.0
        ex.MIN_CHUNK_SECONDS = 1e-3 if whole else 1e-9
        ex._measure = lambda *a: None  # (keep the cost set above)
        out = [np.array(x) for x in p.run()[0]]
        p.close()  # (no batch made ahead after this)
        return out

    split = run(2, whole=False)  # (a batch or more: the prefetch queue's)
    assert calls and set(calls) == {64} and max(chunks) < 64 and len(chunks) > len(calls)
    calls.clear(), chunks.clear()
    whole = run(2, whole=True)
    assert calls and set(calls) == set(chunks) == {64}  # inside each batch's one chunk
    for a, b in zip(split, whole, strict=True):
        np.testing.assert_array_equal(a, b)


def test_costly_samples_get_chunks_that_shrink_towards_the_batch_end():
    p = _pipe(threads=2)
    ex = p._runtime.executor
    stage = _image_stage(p)
    ex._cost[id(stage)] = 1e-3  # a millisecond per sample: image decoding
    chunks = ex._chunks(stage, 64)
    assert chunks[0][0] == 0 and chunks[-1][1] == 64
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:], strict=False))
    sizes = [b - a for a, b in chunks]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1 and sizes[0] <= 16


def test_cheap_samples_keep_few_even_chunks():
    p = _pipe(threads=2)
    ex = p._runtime.executor
    stage = _image_stage(p)
    ex._cost[id(stage)] = 1e-6
    assert len(ex._chunks(stage, 64)) == 1


def test_chunking_does_not_change_results():
    outs = [_pipe(threads).run()[0] for threads in (1, 3)]
    for a, b in zip(*outs, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_cheap_batches_go_two_in_flight_with_the_same_results() -> None:
    """Batches too cheap to split run whole, one on a worker while the producer starts the
    next (executor.Deferred): same values, same order as synchronous execution."""
    import numpy as np

    from stoker import fn, pipeline_def

    def make(pipelined: bool):
        @pipeline_def(batch_size=16, num_threads=2, device_id=None, seed=11,
                      exec_pipelined=pipelined, prefetch_queue_depth=3)
        def p():
            x = fn.external_source(source=lambda info: np.full(
                (4, 4, 3), info.idx_in_epoch % 251, np.uint8), batch=False, layout="HWC")
            return fn.crop_mirror_normalize(x, mirror=fn.random.coin_flip(),
                                            mean=[1.0, 2.0, 3.0]), fn.random.uniform()

        return p()

    sync, pipelined = make(False), make(True)
    for _ in range(60):
        a, b = sync.run(), pipelined.run()
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x.as_array(), y.as_array())
    assert pipelined._runtime.executor.deferred > 0
    assert sync._runtime.executor.deferred == 0


def test_costly_batches_leave_their_last_chunks_to_the_workers_with_the_same_results():
    """A split last stage: the producer starts the next batch while the workers finish the
    last chunks (executor.Deferred); same values, same order as synchronous execution."""
    def make(pipelined: bool):
        @pipeline_def(batch_size=24, num_threads=3, device_id=None, seed=5,
                      exec_pipelined=pipelined, prefetch_queue_depth=2)
        def p():
            x = fn.external_source(source=lambda info: np.full(
                (5 + info.idx_in_epoch % 4, 6, 3), info.idx_in_epoch % 251, np.uint8),
                batch=False, layout="HWC")
            return fn.resize(fn.flip(x, horizontal=fn.random.coin_flip()), size=[3, 4])

        pipe = p()
        pipe.build()
        ex = pipe._runtime.executor
        ex.WHOLE_BATCH_SECONDS = 0.0  # (these batches are cheap: split them anyway)
        ex.MIN_CHUNK_SECONDS = 1e-9
        return pipe

    sync, pipelined = make(False), make(True)
    for _ in range(30):
        a, b = sync.run(), pipelined.run()
        for x, y in zip(a, b, strict=True):
            assert len(x) == len(y) == 24
            for i in range(24):
                np.testing.assert_array_equal(x.at(i), y.at(i))
    assert pipelined._runtime.executor.deferred > 0
    assert sync._runtime.executor.deferred == 0


def test_an_error_in_a_chunk_left_to_the_workers_surfaces_at_its_own_batch():
    """A sample that fails in a split last stage's last chunk (the workers', after the
    producer moved on): its batch raises, naming the sample; the batches around it come
    out whole and in order."""
    import cv2

    def jpeg(i):
        if i == 2 * 24 + 23:  # batch 2's last sample
            return np.frombuffer(b"\xff\xd8\xff\xe0 not a jpeg", np.uint8)
        return cv2.imencode(".jpg", np.full((6, 8, 3), i % 251, np.uint8))[1].reshape(-1)

    @pipeline_def(batch_size=24, num_threads=3, device_id=None, seed=5,
                  prefetch_queue_depth=3)
    def p():
        data = fn.external_source(source=lambda info: jpeg(info.idx_in_epoch), batch=False)
        return fn.resize(fn.decoders.image(data), size=[3, 4])

    pipe = p()
    pipe.build()
    ex = pipe._runtime.executor
    ex.WHOLE_BATCH_SECONDS, ex.MIN_CHUNK_SECONDS = 0.0, 1e-9
    for k in range(2):
        out = pipe.run()[0]
        assert [int(np.array(out.at(i))[0, 0, 0]) for i in (0, 23)] == [24 * k, 24 * k + 23]
    with pytest.raises(SampleError, match="decoders.image.*sample 23 of batch 2"):
        pipe.run()
    assert int(np.array(pipe.run()[0].at(0))[0, 0, 0]) == 72
    assert ex.deferred > 0
    pipe.close()
