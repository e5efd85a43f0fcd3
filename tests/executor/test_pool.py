"""The executor's worker pool: map, and start/collect, which returns before the last tasks."""

from __future__ import annotations

import threading

import pytest

from stoker.executor.pool import WorkerPool


def _busy_worker(pool: WorkerPool) -> threading.Event:
    """Occupies the pool's one worker until the returned event is set."""
    gate, started = threading.Event(), threading.Event()

    def hold(_: int) -> None:
        started.set()
        gate.wait(10)

    assert pool.try_submit(hold) is not None
    assert started.wait(10)
    return gate


def test_start_leaves_the_last_tasks_to_the_workers_and_collect_waits_for_them():
    pool = WorkerPool(2, "test")
    try:
        gate = _busy_worker(pool)
        who: dict[int, str] = {}

        def task(i: int) -> int:
            who[i] = threading.current_thread().name
            return i * i

        job = pool.start(task, 5, keep=2)
        # This thread did tasks 0-2 and left; 3 and 4 wait for the (busy) worker.
        assert sorted(who) == [0, 1, 2] and not job.done.is_set()
        gate.set()
        assert pool.collect(job) == [0, 1, 4, 9, 16]
        me = threading.current_thread().name
        assert [who[i] == me for i in range(5)] == [True, True, True, False, False]
    finally:
        pool.close()


def test_start_on_a_pool_without_workers_does_every_task():
    pool = WorkerPool(1, "test")
    try:
        job = pool.start(lambda i: i + 1, 4, keep=2)
        assert job.done.is_set() and pool.collect(job) == [1, 2, 3, 4]
        assert pool.map(lambda i: i, 0) == []
    finally:
        pool.close()


def test_collect_raises_the_lowest_index_error():
    pool = WorkerPool(2, "test")

    def task(i: int) -> int:
        if i in (1, 3):
            raise ValueError(f"task {i}")
        return i

    try:
        job = pool.start(task, 4, keep=1)
        with pytest.raises(ValueError, match="task 1"):
            pool.collect(job)
        with pytest.raises(ValueError, match="task 1"):
            pool.map(task, 4)
    finally:
        pool.close()


def test_post_runs_every_task_on_the_workers_alone():
    pool = WorkerPool(4, "test")
    try:
        me, who = threading.current_thread().name, {}

        def task(i: int) -> int:
            who[i] = threading.current_thread().name
            return 10 * i

        job = pool.post(task, 3)
        assert pool.collect(job) == [0, 10, 20]
        assert sorted(who) == [0, 1, 2] and me not in who.values()
        assert pool.collect(pool.post(task, 0)) == []
    finally:
        pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.post(task, 1)
