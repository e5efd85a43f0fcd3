"""A small thread pool for per-sample work; the submitting thread works too.

Work is handed out as numbered tasks through a shared counter, so fast threads take more
tasks (no static split). Threads are daemons that ``close()`` stops and joins; an atexit
hook closes every live pool so interpreter exit never waits on a blocked worker.
"""

from __future__ import annotations

import atexit
import itertools
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

_live: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


class _Latch:
    """``threading.Event``'s set/is_set/wait for an event set once, on one lock: a batch
    makes a job or two, on the producer's serial path, and an Event is a Condition of a
    few Python objects."""

    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        self._lock.release()

    def is_set(self) -> bool:
        return not self._lock.locked()

    def wait(self) -> None:
        with self._lock:  # (each waiter in turn takes it and lets it go)
            pass


class _Job:
    __slots__ = ("fn", "n", "counter", "finished", "results", "errors", "done", "claimed")

    def __init__(self, fn: Callable[[int], Any], n: int):
        self.fn = fn
        self.n = n
        self.counter = itertools.count()
        self.finished = itertools.count(1)  # (next() is atomic: no lock to count tasks)
        self.results: list[Any] = [None] * n
        self.errors: list[BaseException | None] = [None] * n
        self.done = _Latch()
        self.claimed: Any = None  # the pool whose idle worker try_submit promised it
        if n == 0:
            self.done.set()

    def work(self, keep: int = 0) -> None:
        """Does tasks until none is left unclaimed, or (``keep``) until at most that many
        are: the other threads do those."""
        while True:
            i = next(self.counter)
            if i >= self.n:
                return
            self._do(i)
            if self.n - 1 - i <= keep:
                return

    def one(self) -> bool:
        """Does one task, if one is left unclaimed (False when none is)."""
        i = next(self.counter)
        if i >= self.n:
            return False
        self._do(i)
        return True

    def _do(self, i: int) -> None:
        try:
            self.results[i] = self.fn(i)
        except BaseException as e:  # handed to the submitting thread
            self.errors[i] = e
        if next(self.finished) == self.n:
            self.done.set()


class WorkerPool:
    def __init__(self, num_threads: int, name: str = "stoker"):
        self.num_threads = max(1, int(num_threads))
        self._tasks: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._closed = False
        # Workers waiting for a task, and those already promised one by try_submit.
        self._idle_lock = threading.Lock()
        self._idle = 0
        self._claimed = 0
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-worker-{i}", daemon=True)
            for i in range(self.num_threads - 1)
        ]
        for t in self._threads:
            t.start()
        _live.add(self)

    def _loop(self) -> None:
        while True:
            with self._idle_lock:
                self._idle += 1
            job = self._tasks.get()
            with self._idle_lock:
                self._idle -= 1
                if job is not None and job.claimed is self:
                    self._claimed -= 1
            if job is None:
                return
            job.work()
            del job  # a finished job must not stay referenced while this thread waits

    def try_submit(self, fn: Callable[[int], Any]) -> _Job | None:
        """Runs ``fn(0)`` on an idle worker and returns at once (``wait(job)`` collects the
        result); None when no worker is idle: the caller should run it itself."""
        with self._idle_lock:
            if self._closed or self._idle - self._claimed <= 0:
                return None
            self._claimed += 1
        job = _Job(fn, 1)
        job.claimed = self
        self._tasks.put(job)
        return job

    def wait(self, job: _Job) -> Any:
        job.done.wait()
        if job.errors[0] is not None:
            raise job.errors[0]
        return job.results[0]

    def map(self, fn: Callable[[int], Any], n: int) -> list[Any]:
        """``[fn(0), ..., fn(n-1)]`` computed on the pool; re-raises the lowest-index error."""
        return self.collect(self.start(fn, n, 0))

    def start(self, fn: Callable[[int], Any], n: int, keep: int) -> _Job:
        """``map`` that returns before the end: this thread does tasks until at most
        ``keep`` are left unclaimed, the workers the rest; ``collect(job)`` waits for them
        (the caller goes on meanwhile: the workers' last tasks overlap its next work)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        job = _Job(fn, n)
        for _ in range(min(len(self._threads), n - 1)):  # (this thread does one at least)
            self._tasks.put(job)
        job.work(keep if self._threads else 0)
        return job

    def post(self, fn: Callable[[int], Any], n: int) -> _Job:
        """``fn(0)``, ..., ``fn(n - 1)`` on the workers (up to one each at a time, in
        order, behind the tasks queued before), returning at once; ``collect(job)`` waits.
        Another thread may take tasks too (``job.work()``, ``job.one()``)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        job = _Job(fn, n)
        for _ in range(min(n, len(self._threads))):
            self._tasks.put(job)
        return job

    def collect(self, job: _Job) -> list[Any]:
        """A started job's results, once every task is done; re-raises the lowest-index
        error."""
        job.done.wait()
        for err in job.errors:
            if err is not None:
                raise err
        return job.results

    def close(self) -> None:
        with self._idle_lock:  # try_submit must not queue a job behind the stop markers
            if self._closed:
                return
            self._closed = True
        for _ in self._threads:
            self._tasks.put(None)
        for t in self._threads:
            if t is not threading.current_thread():
                t.join()


@atexit.register
def _close_all() -> None:
    for pool in list(_live):
        pool.close()
