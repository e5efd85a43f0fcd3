"""DALI's DataLoader proxy: a torch ``DataLoader``'s workers hand samples to one stoker pipeline.

``DALIServer(pipe)`` runs ``pipe`` in the main process. Its ``proxy`` is a picklable
transform for a ``torch.utils.data.Dataset``: in a worker, ``proxy(x)`` (one argument per
``fn.external_source(name=...)`` of the pipeline; keywords when there are several) returns
a placeholder, ``default_collate`` turns a batch of placeholders into one request sent to
the server, and ``produce_data(batch)`` (called by this module's ``DataLoader``) swaps the
placeholders of a collated batch for the pipeline's outputs, as torch tensors. Everything
else the dataset returns (labels) stays as torch collated it.

In the main process, one thread per worker reads that worker's requests from its own
socket (``_proxy_transport``), and a runner feeds each batch with ``feed_input`` and
schedules exactly one pipeline run for it, keeping up to ``prefetch_queue_depth`` batches
in flight (one when the pipeline is synchronous); so pipelined and synchronous pipelines
both work, and a batch may have any size up to the pipeline's ``batch_size``. Outputs
wait in a table keyed by batch id until the loop asks for them, so workers may finish
out of order.

Never a hang: a pipeline error is raised, with stoker's message, for the batch it hit; the
wait for a batch whose request has not arrived checks that its worker is still alive; a
failed server thread fails every waiter; ``DataLoader(timeout=...)`` bounds the wait.
"""

from __future__ import annotations

import atexit
import os
import queue
import sys
import threading
import time
import uuid
import weakref
from collections import deque
from typing import Any

import torch
import torch.multiprocessing as torch_mp
from torch.utils.data import dataloader as torch_dataloader

from stoker.errors import ArgumentError, PipelineError
from stoker.pipeline.pipeline import Pipeline
from stoker.plugin.pytorch import to_torch
from stoker.plugin.pytorch.experimental import _proxy_client as client
from stoker.plugin.pytorch.experimental._proxy_client import (
    DALIOutputBatchRef,
    DALIOutputSampleRef,
    DALIProxy,
)
from stoker.plugin.pytorch.experimental._proxy_transport import Inbox

__all__ = ["DALIServer", "DataLoader", "DALIOutputBatchRef", "DALIOutputSampleRef"]

_STOP = object()
_SERVING: weakref.WeakSet = weakref.WeakSet()  # started servers, stopped at exit
_POLL = 0.1  # seconds between liveness checks while waiting
_DEATH_GRACE = 2.0  # a dead worker's last request may still be unread in its socket


class DALIServer:
    """Runs a stoker pipeline in the main process for a DataLoader's workers (see module doc).

    The pipeline's inputs are its ``fn.external_source`` nodes without a source; its
    ``batch_size`` must be at least the DataLoader's. Any ``prefetch_queue_depth`` works:
    the server feeds a batch before scheduling its run, so a deeper queue only lets more
    batches be processed ahead. By default batches run in the order they arrive from the
    workers, as soon as they are collated; ``deterministic=True`` sends a batch's inputs
    along with the batch itself and runs the pipeline in the order the loop consumes
    batches (reproducible random operators), at the cost of starting each batch only when
    the loop asks for it.
    """

    def __init__(self, pipeline: Pipeline, deterministic: bool = False):
        if not isinstance(pipeline, Pipeline):
            raise TypeError(f"DALIServer: expected a stoker Pipeline, got "
                            f"{type(pipeline).__name__}")
        pipeline.build()
        self._pipe = pipeline
        self._names = _input_names(pipeline)
        if not self._names:
            raise PipelineError("DALIServer: the pipeline has no inputs; give it "
                                "fn.external_source(name=...) nodes without a source")
        self._deterministic = bool(deterministic)
        self._token = uuid.uuid4().hex
        self._inbox = Inbox()
        self._cv = self._inbox.cv
        self._results: dict[tuple, tuple[Any, BaseException | None]] = {}
        self._consumed: dict[tuple, None] = {}  # recent keys, to explain a second produce
        self._fatal: BaseException | None = None
        self._runner: threading.Thread | None = None
        # Read by workers without a lock (a worker dying cannot leave one held).
        self._running = torch_mp.get_context("spawn").RawValue("b", 0)
        client.LOCAL_SERVERS[self._token] = weakref.ref(self)
        self._proxy = DALIProxy(self._token, os.getpid(), self._names,
                                len(pipeline._outputs), self._inbox.address,
                                self._inbox.authkey, self._running, self._deterministic)

    @property
    def proxy(self) -> DALIProxy:
        return self._proxy

    # -- life cycle ------------------------------------------------------------------------
    def __enter__(self) -> DALIServer:
        self.start_thread()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop_thread()

    def _is_thread_running(self) -> bool:
        return self._runner is not None

    def start_thread(self) -> None:
        """Starts serving (``with`` does this); a stopped server may be started again."""
        if self._runner is not None:
            return
        if self._inbox.closed:
            raise PipelineError("DALIServer: the server was closed; make a new one")
        self._fatal = None
        self._inbox.open()
        self._runner = threading.Thread(target=self._serve, daemon=True,
                                        name=f"stoker-proxy-{self._token[:8]}")
        self._running.value = 1
        self._runner.start()
        _SERVING.add(self)

    def stop_thread(self) -> None:
        """Stops serving: batches already fed to the pipeline finish, the rest are dropped."""
        if self._runner is None:
            return
        self._running.value = 0
        self._inbox.requests.put(_STOP)
        self._runner.join()
        self._runner = None
        with self._cv:
            self._results.clear()
            self._inbox.arrived.clear()
            self._cv.notify_all()
        _drain(self._inbox.requests)

    def close(self) -> None:
        """Stops serving and closes the workers' listener; the server cannot restart."""
        self.stop_thread()
        self._inbox.close()
        client.LOCAL_SERVERS.pop(self._token, None)

    def __del__(self) -> None:
        if sys.is_finalizing():
            return  # threads may be frozen: joining them could hang; _close_all ran
        try:
            self.close()
        except Exception:
            pass

    # -- the runner thread -----------------------------------------------------------------
    def _serve(self) -> None:
        pipe = self._pipe
        depth = pipe.prefetch_queue_depth if pipe.exec_async else 1
        in_flight: deque = deque()
        try:
            while True:
                try:
                    request = self._inbox.requests.get(block=not in_flight)
                except queue.Empty:
                    request = None
                if request is _STOP:
                    break
                if request is not None:
                    self._start(request, in_flight)
                    if len(in_flight) < depth:
                        continue
                if in_flight:
                    self._finish(in_flight.popleft())
            while in_flight:  # keep fed inputs and runs in step for a later restart
                self._finish(in_flight.popleft())
        except BaseException as e:
            self._fail(e)

    def _start(self, request: tuple, in_flight: deque) -> None:
        key, worker_id, pid, inputs = request
        if isinstance(inputs, BaseException):  # the request could not be received whole
            self._deliver(key, None, PipelineError(
                f"DALIServer: the batch's inputs did not arrive: {type(inputs).__name__}: "
                f"{inputs}"))
            return
        size = len(inputs[self._names[0]])
        if size > self._pipe.max_batch_size:
            self._deliver(key, None, ArgumentError(
                f"DALIServer: the DataLoader made a batch of {size} samples, but the "
                f"pipeline's batch_size is {self._pipe.max_batch_size}; build the pipeline "
                "with a batch_size at least the DataLoader's"))
            return
        try:
            for name in self._names:
                self._pipe.feed_input(name, inputs[name])
            # One run per fed batch; Pipeline.run() would schedule prefetch_queue_depth runs
            # on its first call and starve for inputs.
            self._pipe._rt().prefetcher.schedule(1)
        except Exception as e:
            self._deliver(key, None, e)
            return
        in_flight.append(key)

    def _finish(self, key: tuple) -> None:
        try:
            outputs = tuple(_to_torch(tl) for tl in self._pipe.outputs())
        except StopIteration:
            self._deliver(key, None, PipelineError(
                "DALIServer: the pipeline ended (a source other than the proxy's inputs ran "
                "out of data)"))
        except Exception as e:
            self._deliver(key, None, e)
        else:
            self._deliver(key, outputs, None)

    def _deliver(self, key: tuple, outputs: Any, error: BaseException | None) -> None:
        with self._cv:
            self._results[key] = (outputs, error)
            self._cv.notify_all()

    def _fail(self, error: BaseException) -> None:
        with self._cv:
            self._fatal = error
            self._cv.notify_all()

    # -- the training loop's side ----------------------------------------------------------
    def produce_data(self, obj: Any) -> Any:
        """``obj`` (a collated batch: tensors, lists, tuples, dicts, objects) with every batch
        placeholder replaced by the pipeline output it stands for."""
        return self._produce(obj, None, None)

    def _produce(self, obj: Any, workers: list | None, timeout: float | None) -> Any:
        refs: list[DALIOutputBatchRef] = []
        holders: set[int] = set()
        client.find_refs(obj, refs, holders, set())
        if not refs:
            return obj
        if self._runner is None:
            raise PipelineError("DALIServer.produce_data: the server is not running; use it "
                                "inside `with DALIServer(pipe) as server:`")
        for ref in refs:
            if ref.server != self._token:
                raise ArgumentError("DALIServer.produce_data: the batch holds a placeholder "
                                    "of another DALIServer")
            if ref.inputs is not None:  # deterministic mode: submit in consumption order
                self._inbox.put((ref.key, ref.worker_id, ref.pid, ref.inputs))
                ref.inputs = None
        outputs: dict[tuple, tuple] = {}
        for ref in refs:
            if ref.key not in outputs:
                outputs[ref.key] = self._wait(ref, workers, timeout)
        return client.replace_refs(obj, outputs, holders, {})

    def _wait(self, ref: DALIOutputBatchRef, workers: list | None,
              timeout: float | None) -> tuple:
        key, start, dead_since = ref.key, time.monotonic(), None
        who = f"DataLoader worker {ref.worker_id} (pid {ref.pid})" \
            if ref.worker_id is not None else "the main process"
        with self._cv:
            if key in self._consumed:
                raise PipelineError("DALIServer.produce_data: this batch was already produced "
                                    "(produce_data replaces placeholders in a copy of the "
                                    "batch; use what it returned)")
            while key not in self._results:
                fatal = self._fatal or self._inbox.error
                if fatal is not None:
                    raise PipelineError(f"DALIServer: the server failed: "
                                        f"{type(fatal).__name__}: {fatal}") from fatal
                if self._runner is None:
                    raise PipelineError("DALIServer: the server stopped while the loop "
                                        "waited for a batch")
                now = time.monotonic()
                if timeout and now - start > timeout:
                    raise RuntimeError(f"DALIServer: the pipeline's outputs for a batch of "
                                       f"{who} took more than timeout={timeout} s")
                if key not in self._inbox.arrived and not _alive(ref, workers):
                    dead_since = dead_since or now
                    if now - dead_since > _DEATH_GRACE:
                        raise RuntimeError(f"DALIServer: {who} exited before its batch "
                                           "reached the pipeline")
                self._cv.wait(_POLL)
            outputs, error = self._results.pop(key)
            self._inbox.arrived.pop(key, None)
            self._consumed[key] = None
            if len(self._consumed) > 4096:
                del self._consumed[next(iter(self._consumed))]
        if error is None:
            return outputs
        error.add_note(f"(raised by the stoker pipeline of a DALIServer, for a batch of "
                       f"{ref.size} samples from {who})")
        try:
            raise error
        finally:
            # Else error -> traceback -> this frame -> error is a cycle that keeps the loader's
            # iterator alive until a garbage collection, which then shuts its workers down
            # slowly (torch waits 5 s for each), possibly inside a freshly forked worker.
            del error

    def _forget_stale(self) -> None:
        """Drops outputs no loop will ask for: those of workers that have exited."""
        with self._cv:
            arrived = self._inbox.arrived
            for key, pid in list(arrived.items()):
                if pid != os.getpid() and not _pid_alive(pid) and key in self._results:
                    del self._results[key], arrived[key]


class DataLoader(torch_dataloader.DataLoader):
    """torch's DataLoader that returns batches with the proxy's placeholders already replaced
    by the pipeline's outputs. Same arguments, after the server; it starts the server if
    it is not running (and stops it when the loader is deleted)."""

    def __init__(self, dali_server: DALIServer, *args: Any, **kwargs: Any):
        if not isinstance(dali_server, DALIServer):
            raise TypeError(f"DataLoader: the first argument must be a DALIServer, got "
                            f"{type(dali_server).__name__}")
        super().__init__(*args, **kwargs)
        self.dali_server = dali_server
        self.server_started_by_loader = False

    def ensure_server_listening(self) -> None:
        if not self.dali_server._is_thread_running():
            self.dali_server.start_thread()
            self.server_started_by_loader = True

    def __iter__(self) -> Any:
        # Before torch starts the workers: their first proxy call needs a running server.
        self.ensure_server_listening()
        self.dali_server._forget_stale()
        return super().__iter__()

    def _get_iterator(self) -> Any:
        return _SingleIter(self) if self.num_workers == 0 else _MultiIter(self)

    def __del__(self) -> None:
        if getattr(self, "server_started_by_loader", False) and not sys.is_finalizing():
            try:
                self.dali_server.stop_thread()
            except Exception:
                pass  # interpreter shutdown


class _Producing:
    """Mixed into torch's loader iterators: each batch goes through produce_data."""

    def __init__(self, loader: DataLoader):
        super().__init__(loader)
        self._dali_server = loader.dali_server
        self._dali_timeout = loader.timeout or None

    def _next_data(self) -> Any:
        data = super()._next_data()
        return self._dali_server._produce(data, getattr(self, "_workers", None),
                                          self._dali_timeout)


class _SingleIter(_Producing, torch_dataloader._SingleProcessDataLoaderIter):
    pass


class _MultiIter(_Producing, torch_dataloader._MultiProcessingDataLoaderIter):
    pass


@atexit.register
def _close_all() -> None:
    """At exit, while threads still run: a server left serving stops cleanly."""
    for server in list(_SERVING):
        server.close()


# -- helpers ---------------------------------------------------------------------------------
def _input_names(pipe: Pipeline) -> list[str]:
    """Names of the external_source nodes fed by feed_input, in definition order."""
    ops = [op for op, inst in pipe._instances.items()
           if op.schema.name == "external_source" and getattr(inst, "kind", None) == "feed"]
    return [op.name for op in sorted(ops, key=lambda op: op.order)]


def _to_torch(batch: Any) -> Any:
    if batch.is_dense_tensor():
        return to_torch(batch)
    return [torch.from_numpy(batch.at(i).copy()) for i in range(len(batch))]  # ragged


def _alive(ref: DALIOutputBatchRef, workers: list | None) -> bool:
    if ref.pid == os.getpid():
        return True
    if workers is not None and ref.worker_id is not None and ref.worker_id < len(workers):
        return workers[ref.worker_id].is_alive()  # reaps it, as torch's own checks do
    return _pid_alive(ref.pid)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a dead child that nobody has reaped yet is a zombie: exists, but is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def _drain(q: queue.Queue) -> None:
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass
