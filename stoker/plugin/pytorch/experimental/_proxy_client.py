"""The DataLoader-worker side of the proxy: the transform, its placeholders and their collate.

A worker (or the main process when ``num_workers=0``) calls the proxy once per sample.
The proxy keeps the sample's inputs and returns placeholders. torch's ``default_collate``
then meets the placeholders of one batch and hands them to ``collate_sample_refs``
(registered in ``default_collate_fn_map``), which sends the batch's inputs to the server
in the main process and returns one batch placeholder per pipeline output; the main
process swaps those for the pipeline's outputs (``DALIServer.produce_data``).

``find_refs`` and ``replace_refs`` then walk a collated batch in the main process.

A batch is identified by (a token of the producing process and thread, a batch counter),
so batches from different workers, epochs and restarted workers never collide. Samples
are numbered per process; a collate takes exactly the samples its placeholders name and
drops older pending ones, which belonged to a batch whose loading raised. Nothing here
holds the server object: the proxy travels to workers by pickling (spawn) or by fork.
"""

from __future__ import annotations

import inspect
import os
import threading
import uuid
import weakref
from typing import Any

import numpy as np
import torch
from torch.utils.data import get_worker_info
from torch.utils.data._utils.collate import default_collate_fn_map

from stoker.errors import ArgumentError, PipelineError
from stoker.plugin.pytorch.experimental import _proxy_transport as transport

# Servers of this process by token, so that proxy calls made in the server's own process
# (num_workers=0) hand their batches over directly instead of through a socket.
LOCAL_SERVERS: dict[str, weakref.ref] = {}


class DALIOutputSampleRef:
    """Placeholder for one output of one sample, returned by ``proxy(...)`` in a worker."""

    __slots__ = ("proxy", "seq", "output_idx")

    def __init__(self, proxy: Any, seq: int, output_idx: int):
        self.proxy = proxy
        self.seq = seq
        self.output_idx = output_idx

    def __reduce__(self) -> tuple:
        # Only reaches another process when the DataLoader does not batch (batch_size=None);
        # produce_data then explains that. The proxy stays behind: its shared flag can be
        # pickled only while a process is spawned, and a failed pickle would lose the batch.
        return DALIOutputSampleRef, (None, self.seq, self.output_idx)

    def __repr__(self) -> str:
        return f"DALIOutputSampleRef(sample={self.seq}, output_idx={self.output_idx})"


class DALIOutputBatchRef:
    """Placeholder for one pipeline output of one collated batch; ``produce_data`` swaps it."""

    __slots__ = ("server", "key", "output_idx", "size", "worker_id", "pid", "inputs")

    def __init__(self, server: str, key: tuple, output_idx: int, size: int,
                 worker_id: int | None, pid: int, inputs: dict | None = None):
        self.server = server
        self.key = key
        self.output_idx = output_idx
        self.size = size
        self.worker_id = worker_id
        self.pid = pid
        self.inputs = inputs  # carried only in deterministic mode, by one ref of the batch

    def __reduce__(self) -> tuple:
        return DALIOutputBatchRef, (self.server, self.key, self.output_idx, self.size,
                                    self.worker_id, self.pid, self.inputs)

    def __repr__(self) -> str:
        return (f"DALIOutputBatchRef(batch={self.key[1]}, output_idx={self.output_idx}, "
                f"size={self.size}, worker={self.worker_id})")


class _State:
    """One process's (and thread's) samples waiting for their collate."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.token = uuid.uuid4().hex[:16]
        self.next_seq = 0
        self.next_batch = 0
        self.pending: dict[int, dict[str, Any]] = {}
        self.last: tuple[tuple[int, ...], tuple] | None = None  # (samples, key) last sent


_local = threading.local()


def _state(server: str) -> _State:
    states = getattr(_local, "states", None)
    if states is None:
        states = _local.states = {}
    state = states.get(server)
    # A forked worker inherits the parent's thread-local state: start afresh there.
    if state is None or state.pid != os.getpid():
        state = states[server] = _State()
    return state


class DALIProxy:
    """The picklable callable behind ``DALIServer.proxy``: use it as a dataset transform."""

    def __init__(self, server: str, server_pid: int, names: list[str], num_outputs: int,
                 address: Any, authkey: bytes, running: Any, deterministic: bool):
        self._server = server
        self._server_pid = server_pid
        self._names = list(names)
        self._num_outputs = num_outputs
        self._address = address
        self._authkey = authkey
        self._running = running  # a shared byte, read without a lock
        self._deterministic = deterministic
        kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if len(names) == 1
                else inspect.Parameter.KEYWORD_ONLY)
        self.__signature__ = inspect.Signature([inspect.Parameter(n, kind) for n in names])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            got = ", ".join([type(a).__name__ for a in args] +
                            [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
            raise ArgumentError(f"DALIServer.proxy: the pipeline's inputs make the call "
                                f"proxy{self.__signature__}, got proxy({got}): {e}") from None
        if not self._running.value:
            raise PipelineError("DALIServer.proxy: the server is not running; call the proxy "
                                "inside `with DALIServer(pipe) as server:` (or after "
                                "server.start_thread())")
        state = _state(self._server)
        seq = state.next_seq
        state.next_seq += 1
        state.pending[seq] = dict(bound.arguments)
        refs = tuple(DALIOutputSampleRef(self, seq, i) for i in range(self._num_outputs))
        return refs[0] if len(refs) == 1 else refs

    def collate(self, seqs: tuple[int, ...], output_idx: int) -> DALIOutputBatchRef:
        state = _state(self._server)
        info = get_worker_info()
        worker_id = info.id if info is not None else None
        if state.last is not None and state.last[0] == seqs:  # another output, same batch
            return DALIOutputBatchRef(self._server, state.last[1], output_idx, len(seqs),
                                      worker_id, state.pid)
        missing = [s for s in seqs if s not in state.pending]
        if missing:
            raise PipelineError(f"DALIServer.proxy: the batch holds placeholders of samples "
                                f"{missing} that are not waiting for a collate here (collated "
                                "twice, or made in another process)")
        inputs = {name: [state.pending[s][name] for s in seqs] for name in self._names}
        newest = max(seqs)
        state.pending = {s: v for s, v in state.pending.items() if s > newest}
        key = (state.token, state.next_batch)
        state.next_batch += 1
        state.last = (seqs, key)
        ref = DALIOutputBatchRef(self._server, key, output_idx, len(seqs), worker_id, state.pid)
        if self._deterministic:
            ref.inputs = inputs  # produce_data submits it, in the order batches are consumed
        else:
            self._send((key, worker_id, state.pid, inputs))
        return ref

    def _send(self, request: tuple) -> None:
        if os.getpid() == self._server_pid:
            server = LOCAL_SERVERS.get(self._server)
            server = server() if server is not None else None
            if server is None:
                raise PipelineError("DALIServer.proxy: the server was deleted")
            server._inbox.put(request)
        else:
            transport.send(self._server, self._address, self._authkey, request)


def collate_sample_refs(batch: list, *, collate_fn_map: Any = None) -> DALIOutputBatchRef:
    """default_collate's rule for proxy placeholders: one batch request per batch."""
    first = batch[0]
    for ref in batch:
        if ref.proxy is not first.proxy or ref.output_idx != first.output_idx:
            raise PipelineError("DALIServer: a batch mixes placeholders of different proxies "
                                "or pipeline outputs")
    return first.proxy.collate(tuple(ref.seq for ref in batch), first.output_idx)


default_collate_fn_map[DALIOutputSampleRef] = collate_sample_refs


# -- in the main process: finding and replacing the placeholders of a collated batch ---------
def find_refs(obj: Any, out: list, holders: set, seen: set) -> bool:
    """Collects the batch placeholders in ``obj`` into ``out`` and the ids of the containers
    that hold them (directly or deeper) into ``holders``; True if ``obj`` holds one."""
    if isinstance(obj, DALIOutputBatchRef):
        out.append(obj)
        return True
    if isinstance(obj, DALIOutputSampleRef):
        raise PipelineError("DALIServer.produce_data: found a per-sample placeholder; the "
                            "DataLoader must batch samples with torch's default_collate "
                            "(batch_size=None or a custom collate_fn does not)")
    if isinstance(obj, str | bytes | torch.Tensor | np.ndarray) or id(obj) in seen:
        return id(obj) in holders
    if isinstance(obj, dict):
        values: Any = obj.values()
    elif isinstance(obj, list | tuple):
        values = obj
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        values = vars(obj).values()
    else:
        return False
    seen.add(id(obj))
    found = False
    for value in values:
        found = find_refs(value, out, holders, seen) or found
    if found:
        holders.add(id(obj))
    return found


def replace_refs(obj: Any, outputs: dict, holders: set, memo: dict) -> Any:
    """``obj`` with placeholders swapped for outputs. Containers that hold placeholders are
    copied (lists, tuples, dicts) or updated in place (other objects, as DALI does); the
    rest is kept as it is."""
    if isinstance(obj, DALIOutputBatchRef):
        return outputs[obj.key][obj.output_idx]
    if id(obj) not in holders:
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    memo[id(obj)] = obj  # a cycle back to obj ends here

    def sub(value: Any) -> Any:
        return replace_refs(value, outputs, holders, memo)

    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        new = obj._replace(**{f: sub(getattr(obj, f)) for f in obj._fields})
    elif isinstance(obj, list | tuple):
        new = type(obj)(sub(v) for v in obj)
    elif isinstance(obj, dict):
        new = {k: sub(v) for k, v in obj.items()}
        if type(obj) is not dict:  # keep the user's mapping type
            obj.update(new)
            new = obj
    else:
        for name, value in list(vars(obj).items()):
            setattr(obj, name, sub(value))
        new = obj
    memo[id(obj)] = new
    return new
