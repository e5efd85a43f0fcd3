"""Runs batches ahead of the consumer, DALI-style: each ``schedule()`` is one batch to make.

The producer thread makes scheduled batches in order and queues each result (or the
exception that stopped it). ``StopIteration`` from a source ends the stream until
``restart()``; other errors are delivered at their place in the stream and production
goes on. ``pending`` counts batches scheduled and not yet taken, so callers can keep
exactly ``prefetch_queue_depth`` in flight. In synchronous mode ``schedule()`` makes the
batch on the calling thread.

With a ``finish`` step (a pipeline with GPU operators), a batch is made in two steps: the
producer thread runs ``produce()`` (the CPU part) and hands the result to a second thread
that runs ``finish(result)`` (the GPU part) while the producer starts the next batch. The
second thread takes batches in order, so ordering, errors and end-of-stream are delivered
exactly as with one step.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from stoker.errors import PipelineError
from stoker.executor.executor import Deferred


class Prefetcher:
    def __init__(self, produce: Callable[[], Any], asynchronous: bool, name: str,
                 finish: Callable[[Any], Any] | None = None):
        self._produce = produce
        self._finish = finish
        self._async = asynchronous
        self._name = name
        self._cv = threading.Condition()
        self._credits = 0
        self._results: deque[tuple[bool, Any]] = deque()
        self._busy = False
        self._ended = False
        self._stop = False
        self._thread: threading.Thread | None = None
        # Two-step mode: batches whose first step is done, waiting for (or in) the second.
        self._handoff: deque[tuple[bool, Any]] = deque()
        self._finishing = 0  # in _handoff or being finished
        self._finisher: threading.Thread | None = None

    @property
    def pending(self) -> int:
        """Batches scheduled and not yet taken by the consumer."""
        with self._cv:
            return self._credits + len(self._results) + int(self._busy) + self._finishing

    def schedule(self, n: int = 1) -> None:
        if self._stop:
            raise PipelineError("the pipeline is closed")
        if not self._async:
            for _ in range(n):
                if self._ended:
                    return
                result = self._make()
                if self._finish is not None:
                    result = self._make_rest(result)
                self._results.append(result)
            return
        with self._cv:
            if self._ended:
                return
            self._credits += n
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()
                if self._finish is not None:
                    self._finisher = threading.Thread(target=self._finish_loop,
                                                      name=f"{self._name}-gpu", daemon=True)
                    self._finisher.start()
            self._cv.notify_all()

    def _make(self) -> tuple[bool, Any]:
        try:
            return True, self._produce()
        except BaseException as e:  # delivered to the consumer in order
            if isinstance(e, StopIteration):
                self._ended = True
            return False, e

    def _make_rest(self, first: tuple[bool, Any]) -> tuple[bool, Any]:
        ok, value = first
        if not ok:
            return first
        try:
            return True, self._finish(value)
        except BaseException as e:  # delivered to the consumer in order
            return False, e

    def _loop(self) -> None:
        while True:
            with self._cv:
                while self._credits == 0 and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                self._credits -= 1
                self._busy = True
            result = self._make()
            with self._cv:
                self._busy = False
                if self._finish is None:
                    self._results.append(result)
                else:
                    self._handoff.append(result)
                    self._finishing += 1
                if self._ended:
                    self._credits = 0
                self._cv.notify_all()
            del result  # see _finish_loop

    def _finish_loop(self) -> None:
        while True:
            with self._cv:
                while not self._handoff and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                first = self._handoff.popleft()
            result = self._make_rest(first)
            with self._cv:
                self._finishing -= 1
                self._results.append(result)
                self._cv.notify_all()
            # Nothing of a finished batch may stay on this thread's stack while it waits:
            # it would keep the pipeline alive and garbage collection could not close it.
            del first, result

    def get(self) -> Any:
        """The next batch in order; raises what producing it raised."""
        with self._cv:
            while not self._results:
                if self._stop:
                    raise PipelineError("the pipeline is closed")
                if self._ended and not self._finishing:
                    raise StopIteration
                if self._credits == 0 and not self._busy and not self._finishing:
                    raise PipelineError("no batch is scheduled: call schedule_run() or run()")
                self._cv.wait()
            ok, value = self._results.popleft()
        if ok:
            # A batch whose last stage a worker finishes (executor.Deferred): wait for it
            # here, in order; what making it raised is raised at its place.
            return value.result() if isinstance(value, Deferred) else value
        if isinstance(value, StopIteration):
            raise StopIteration
        raise value

    def restart(self, before: Callable[[], None]) -> None:
        """Starts a new pass: lets the producer finish every batch already scheduled, calls
        ``before`` (sources reset) and drops an end-of-stream marker. Batches already made
        are kept, as DALI keeps them: a reader's prefetched batches already hold the next
        epoch's samples. Finishing the scheduled ones first makes the epoch boundary
        depend on the calls made, never on how far the producer thread happened to get."""
        with self._cv:
            while self._busy or ((self._credits or self._finishing) and not self._stop):
                self._cv.wait()
            before()
            self._results = deque(r for r in self._results if not (
                not r[0] and isinstance(r[1], StopIteration)))
            self._ended = False

    def close(self, timeout: float | None = None) -> None:
        """Stops the producer; waits for the batch it is making (at most ``timeout`` s)."""
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        for t in (self._thread, self._finisher):
            if t is not None and t is not threading.current_thread():
                t.join(timeout)
