"""DataLoader proxy (DALI's plugin.pytorch.experimental.proxy): a torch DataLoader's workers
hand samples to one stoker pipeline in the main process.

Outputs are checked per sample against numpy references of what the pipeline does; labels
and batch order against the dataset. Every DataLoader loop runs under a time limit: with
worker processes in a child interpreter (subprocess.run(timeout=...)), in-process ones in
a thread joined with a timeout, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch.utils.data import default_collate  # noqa: E402

from stoker import fn, pipeline_def, types  # noqa: E402
from stoker.errors import ArgumentError, PipelineError, SampleError  # noqa: E402
from stoker.plugin.pytorch.experimental import _proxy_transport as transport  # noqa: E402
from stoker.plugin.pytorch.experimental import proxy as dali_proxy  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHARE_DEFAULT = transport.SHARE_MIN_BYTES
MEAN, STD = [100.0, 120.0, 140.0], [50.0, 60.0, 70.0]
N = 11  # samples; batches of 3 leave a last batch of 2


def image(i: int) -> np.ndarray:
    return np.random.default_rng(i).integers(0, 256, (6, 7, 3), dtype=np.uint8)


def cmn_reference(img: np.ndarray) -> np.ndarray:
    """crop (4, 5) at the centre, normalize per channel, HWC -> CHW."""
    x = (img[1:5, 1:6].astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    return x.transpose(2, 0, 1)


@pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=7)
def image_pipe():
    images = fn.external_source(name="images", layout="HWC")
    normalized = fn.crop_mirror_normalize(images, crop=(4, 5), mean=MEAN, std=STD,
                                          dtype=types.FLOAT, output_layout="CHW")
    scaled = fn.cast(images, dtype=types.FLOAT) * 0.5
    return normalized, scaled


@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
def noisy_pipe():
    x = fn.external_source(name="x")
    return fn.cast(x, dtype=types.FLOAT) + fn.random.uniform(range=(0.0, 1.0))


@pipeline_def(batch_size=4, num_threads=1, device_id=None, prefetch_queue_depth=2)
def two_input_pipe():
    a = fn.external_source(name="a", dtype=types.UINT8)
    b = fn.external_source(name="b")
    return fn.cast(a, dtype=types.INT32) + b, fn.cast(a, dtype=types.INT32) - b


class ImageDataset(torch.utils.data.Dataset):
    """(proxy(image), label); optionally slow for the first batch, failing or dying."""

    def __init__(self, proxy, slow_first=0.0, raise_at=None, exit_at=None, small_at=None):
        self.proxy, self.slow_first = proxy, slow_first
        self.raise_at, self.exit_at, self.small_at = raise_at, exit_at, small_at

    def __len__(self):
        return N

    def __getitem__(self, i):
        if i < 3:
            time.sleep(self.slow_first)  # the second worker's batch comes back first
        if i == self.raise_at:
            raise ValueError(f"cannot load sample {i}")
        if i == self.exit_at:
            os._exit(3)
        img = image(i)[:2, :2] if i == self.small_at else image(i)
        return self.proxy(img), i


def in_threes(indices):
    return [list(indices[k:k + 3]) for k in range(0, len(indices), 3)]


def check_image_batches(batches, labels):
    """Each batch is ((normalized, scaled), labels): labels as given, outputs per sample
    equal to the numpy reference of the sample's image."""
    assert [b[1].tolist() for b in batches] == labels
    for (normalized, scaled), indices in batches:
        assert normalized.dtype == torch.float32 and scaled.dtype == torch.float32
        for j, i in enumerate(indices.tolist()):
            np.testing.assert_allclose(normalized[j].numpy(), cmn_reference(image(i)),
                                       rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(scaled[j].numpy(), image(i) * np.float32(0.5))


SCENARIOS = ["scenario_workers", "scenario_spawn", "scenario_deterministic",
             "scenario_worker_raises", "scenario_worker_dies", "scenario_pipeline_error",
             "scenario_torch_loader_outside_server"]


def run_scenarios():
    """Entry point of the child interpreter: runs each scenario, prints its outcome."""
    import traceback

    for name in SCENARIOS:
        try:
            globals()[name]()
            print(f"RESULT {name} ok", flush=True)
        except BaseException:
            detail = traceback.format_exc().replace("\n", "\n    ")
            print(f"RESULT {name} FAILED\n    {detail}", flush=True)


@pytest.fixture(scope="module")
def isolated():
    """Outcomes of the worker-process scenarios, all run in one fresh interpreter (its
    start-up costs seconds) under one time limit: a hang fails every one of them."""
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import test_proxy; "
            "test_proxy.run_scenarios()")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120)
        out, err = done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        out, err = e.stdout or "", f"HUNG (over 120 s)\n{e.stderr or ''}"
        out = out.decode() if isinstance(out, bytes) else out
    outcomes = {}
    for block in out.split("RESULT ")[1:]:
        name, _, rest = block.partition(" ")
        outcomes[name] = rest
    return outcomes, err


def check_isolated(isolated, name):
    outcomes, err = isolated
    assert name in outcomes, f"{name} did not finish:\n{err[-3000:]}"
    assert outcomes[name].startswith("ok"), outcomes[name]


def run_with_timeout(target, timeout: float = 30):
    """Runs ``target()`` on a thread; fails the test if it does not finish in time."""
    box: dict = {}

    def work():
        try:
            box["value"] = target()
        except BaseException as e:  # handed to the test thread
            box["error"] = e

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        pytest.fail(f"did not finish in {timeout} s (hang)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- scenarios run in a child interpreter (DataLoader worker processes) ------------------
def raised_by(action):
    """(type, message, notes) of what ``action()`` raises; the exception itself is dropped."""
    try:
        action()
    except Exception as e:
        return type(e), str(e), list(getattr(e, "__notes__", []))
    return None


def shut_down(iterator):
    """torch re-raises a worker's exception from a local variable, a reference cycle that
    keeps the iterator alive until a garbage collection, which then takes 5 s per worker
    to shut it down (measured), maybe inside a later forked worker: do it now."""
    iterator._shutdown_workers()


@contextlib.contextmanager
def sharing_from(size):
    """Batches of ``size`` bytes or more go through shared memory (forked workers inherit
    the setting); 0 makes even these small images do so, as real images do."""
    transport.SHARE_MIN_BYTES = size
    try:
        yield
    finally:
        transport.SHARE_MIN_BYTES = SHARE_DEFAULT


def scenario_workers(num_workers=2, context=None, epochs=2, share_from=0):
    with sharing_from(share_from), dali_proxy.DALIServer(image_pipe()) as server:
        dataset = ImageDataset(server.proxy, slow_first=0.1 if num_workers > 1 else 0.0)
        loader = dali_proxy.DataLoader(server, dataset, batch_size=3, shuffle=False,
                                       num_workers=num_workers, multiprocessing_context=context)
        for _ in range(epochs):  # a second epoch starts new workers
            check_image_batches(list(loader), in_threes(range(N)))


def scenario_spawn():
    # The proxy is pickled to the worker; its small batches are pickled to the server.
    scenario_workers(1, "spawn", epochs=1, share_from=SHARE_DEFAULT)


def scenario_deterministic():
    def epoch():
        with dali_proxy.DALIServer(noisy_pipe(), deterministic=True) as server:
            ds = _ProxyOnly(server.proxy)
            loader = dali_proxy.DataLoader(server, ds, batch_size=3, num_workers=2)
            return [b.numpy() for b in loader]

    first, second = epoch(), epoch()
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)  # same pipeline order: same random draws
    values = np.concatenate(first)
    assert values.shape == (N, 2)
    assert np.all((values >= np.arange(N)[:, None]) & (values < np.arange(N)[:, None] + 1))


class _ProxyOnly(torch.utils.data.Dataset):
    def __init__(self, proxy, exit_at=None):
        self.proxy, self.exit_at = proxy, exit_at

    def __len__(self):
        return N

    def __getitem__(self, i):
        if i == self.exit_at:
            os._exit(3)
        return self.proxy(np.full(2, i, np.uint8))


def scenario_worker_raises():
    with dali_proxy.DALIServer(image_pipe()) as server:
        loader = dali_proxy.DataLoader(server, ImageDataset(server.proxy, raise_at=7),
                                       batch_size=3, num_workers=2)
        it, got = iter(loader), []
        kind, message, _ = raised_by(lambda: got.extend(it))
        shut_down(it)
        assert kind is ValueError and "cannot load sample 7" in message
        check_image_batches(got, in_threes(range(6)))  # batches before the failing one


def scenario_worker_dies():
    # No label tensors here: torch passes those by a descriptor fetched from the worker
    # itself, so a batch of a worker that has died since may fail to unpickle, as
    # ConnectionResetError rather than torch's "exited unexpectedly" (a race in torch).
    with dali_proxy.DALIServer(noisy_pipe()) as server:
        loader = dali_proxy.DataLoader(server, _ProxyOnly(server.proxy, exit_at=7),
                                       batch_size=3, num_workers=2)
        it = iter(loader)
        kind, message, _ = raised_by(lambda: list(it))
        shut_down(it)
        assert kind is RuntimeError and "exited unexpectedly" in message, message


def scenario_pipeline_error():
    # Sample 4's shape differs: its batch is shared as separate samples, not one array.
    with sharing_from(0), dali_proxy.DALIServer(image_pipe()) as server:
        loader = dali_proxy.DataLoader(server, ImageDataset(server.proxy, small_at=4),
                                       batch_size=3, num_workers=2)
        it = iter(loader)
        check_image_batches([next(it)], [[0, 1, 2]])
        kind, message, notes = raised_by(lambda: next(it))
        assert kind is SampleError
        # The operator and the line of the pipeline definition that made it.
        assert re.search(r"fn\.crop_mirror_normalize \(created at .*test_proxy.py:\d+\)",
                         message), message
        assert any("DataLoader worker" in note for note in notes)
        check_image_batches(list(it), [[6, 7, 8], [9, 10]])  # the loop may go on
        check_image_batches([next(iter(loader))], [[0, 1, 2]])


def scenario_torch_loader_outside_server():
    server = dali_proxy.DALIServer(image_pipe())
    loader = torch.utils.data.DataLoader(ImageDataset(server.proxy), batch_size=3,
                                         num_workers=1)
    it = iter(loader)
    kind, message, _ = raised_by(lambda: next(it))
    shut_down(it)
    assert kind is PipelineError and "server is not running" in message, message


def test_loader_with_workers_matches_numpy_in_dataset_order(isolated):
    check_isolated(isolated, "scenario_workers")


def test_loader_without_workers_matches_numpy_in_dataset_order():
    run_with_timeout(lambda: scenario_workers(0))


def test_spawned_workers_receive_a_picklable_proxy(isolated):
    check_isolated(isolated, "scenario_spawn")


def test_deterministic_mode_repeats_random_draws(isolated):
    check_isolated(isolated, "scenario_deterministic")


def test_worker_exception_reaches_the_loop(isolated):
    check_isolated(isolated, "scenario_worker_raises")


def test_dead_worker_raises_instead_of_hanging(isolated):
    check_isolated(isolated, "scenario_worker_dies")


def test_pipeline_error_names_the_operator_and_loop_goes_on(isolated):
    check_isolated(isolated, "scenario_pipeline_error")


def test_torch_loader_with_stopped_server_raises(isolated):
    check_isolated(isolated, "scenario_torch_loader_outside_server")


# -- in-process tests (num_workers=0 and hand-made batches) ----------------------------------
def test_keyword_inputs_several_outputs_and_default_collate():
    def body():
        with dali_proxy.DALIServer(two_input_pipe()) as server:
            a = [np.arange(3, dtype=np.uint8) + i for i in range(3)]
            b = [np.full(3, 10 * i, np.int32) for i in range(3)]
            samples = [(*server.proxy(a=x, b=y), {"id": i}) for i, (x, y) in
                       enumerate(zip(a, b, strict=True))]
            total, diff, meta = server.produce_data(default_collate(samples))
            np.testing.assert_array_equal(total.numpy(), np.stack(a).astype(np.int32) +
                                          np.stack(b))
            np.testing.assert_array_equal(diff.numpy(), np.stack(a).astype(np.int32) -
                                          np.stack(b))
            assert meta["id"].tolist() == [0, 1, 2]

    run_with_timeout(body)


def test_failed_source_does_not_shift_the_other_input():
    """Three batches in flight; the middle one has a bad dtype for input 'a'. The third
    must still pair a and b of its own samples (every source took its part of batch 2)."""
    def body():
        with dali_proxy.DALIServer(two_input_pipe()) as server:
            batches = []
            for k in range(3):
                dtype = np.float32 if k == 1 else np.uint8
                samples = [server.proxy(a=np.full(2, k, dtype), b=np.full(2, 100 * k, np.int32))
                           for _ in range(2)]
                batches.append(default_collate(samples))
            assert server.produce_data(batches[0])[0].tolist() == [[0, 0], [0, 0]]
            with pytest.raises(SampleError, match="fn.external_source"):
                server.produce_data(batches[1])
            assert server.produce_data(batches[2])[0].tolist() == [[202, 202], [202, 202]]

    run_with_timeout(body)


def test_failed_sample_load_does_not_leak_into_the_next_batch():
    def body():
        with dali_proxy.DALIServer(image_pipe()) as server:
            dataset = ImageDataset(server.proxy, raise_at=4)
            loader = dali_proxy.DataLoader(server, dataset, batch_size=3, num_workers=0)
            with pytest.raises(ValueError, match="cannot load sample 4"):
                list(loader)  # sample 3 was given to the proxy, its batch never collated
            dataset.raise_at = None
            check_image_batches(list(loader), in_threes(range(N)))

    run_with_timeout(body)


def test_loader_starts_a_stopped_server_like_dali():
    def body():
        server = dali_proxy.DALIServer(image_pipe())
        loader = dali_proxy.DataLoader(server, ImageDataset(server.proxy), batch_size=3)
        check_image_batches(list(loader), in_threes(range(N)))
        assert loader.server_started_by_loader
        server.stop_thread()

    run_with_timeout(body)


def test_proxy_and_produce_data_outside_with_raise():
    server = dali_proxy.DALIServer(image_pipe())
    with pytest.raises(PipelineError, match="server is not running"):
        server.proxy(image(0))
    with server:
        batch = default_collate([server.proxy(image(0))])
    with pytest.raises(PipelineError, match="server is not running"):
        server.produce_data(batch)


def test_proxy_signature_errors():
    with dali_proxy.DALIServer(image_pipe()) as server:
        with pytest.raises(ArgumentError, match=r"proxy\(images\), got proxy\(\)"):
            server.proxy()
        with pytest.raises(ArgumentError, match="unexpected keyword"):
            server.proxy(image(0), labels=1)
    with dali_proxy.DALIServer(two_input_pipe()) as server:
        with pytest.raises(ArgumentError, match=r"proxy\(\*, a, b\)"):
            server.proxy(np.zeros(2, np.uint8), np.zeros(2, np.int32))


def test_batch_larger_than_pipeline_batch_size_raises():
    def body():
        with dali_proxy.DALIServer(image_pipe()) as server:
            batch = default_collate([server.proxy(image(i)) for i in range(5)])
            with pytest.raises(ArgumentError, match="batch of 5 samples.*batch_size is 4"):
                server.produce_data(batch)

    run_with_timeout(body)


def test_unbatched_loader_is_explained():
    with dali_proxy.DALIServer(image_pipe()) as server:
        loader = dali_proxy.DataLoader(server, ImageDataset(server.proxy), batch_size=None)
        with pytest.raises(PipelineError, match="per-sample placeholder"):
            next(iter(loader))


def test_batch_from_a_dead_process_raises(monkeypatch):
    """The worker's batch placeholder arrived but its request never will: the wait checks
    that the worker lives instead of waiting forever."""
    monkeypatch.setattr(dali_proxy, "_DEATH_GRACE", 0.2)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: its pid is gone
    with dali_proxy.DALIServer(image_pipe()) as server:
        ref = dali_proxy.DALIOutputBatchRef(server._token, ("lost", 0), 0, 3, 1, child.pid)
        with pytest.raises(RuntimeError, match=r"worker 1 \(pid \d+\) exited before"):
            run_with_timeout(lambda: server.produce_data([ref, torch.zeros(3)]), 10)


def test_rejects_pipelines_without_inputs():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def no_inputs():
        return fn.random.uniform(range=(0.0, 1.0), shape=(2,))

    with pytest.raises(PipelineError, match="no inputs"):
        dali_proxy.DALIServer(no_inputs())
    with pytest.raises(TypeError, match="stoker Pipeline"):
        dali_proxy.DALIServer(object())


def test_placeholders_inside_dicts_namedtuples_and_objects_are_replaced():
    import collections

    Pair = collections.namedtuple("Pair", ["image", "label"])

    class Holder:
        def __init__(self, value):
            self.value = value

    def body():
        with dali_proxy.DALIServer(image_pipe()) as server:
            samples = [{"pair": Pair(server.proxy(image(i)), i)} for i in range(3)]
            batch = default_collate(samples)
            holder = Holder(batch)
            produced = server.produce_data([holder, "text"])
            assert produced[0] is holder and produced[1] == "text"
            (normalized, scaled), labels = holder.value["pair"]
            assert isinstance(holder.value["pair"], Pair)
            check_image_batches([((normalized, scaled), labels)], [[0, 1, 2]])
            with pytest.raises(PipelineError, match="already produced"):
                server.produce_data(batch)  # the placeholders of a batch are used once

    run_with_timeout(body)


@pytest.mark.parametrize("settings", [{"exec_pipelined": False}, {"prefetch_queue_depth": 1},
                                      {"prefetch_queue_depth": 3}])
def test_any_pipelining_serves_batches_in_flight(settings):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, **settings)
    def doubling():
        return fn.external_source(name="x") * 2

    def body():
        with dali_proxy.DALIServer(doubling()) as server:
            # Five batches sent before the first is asked for, the last one smaller.
            batches = [default_collate([server.proxy(np.full(2, 10 * k + j, np.int32))
                                        for j in range(4 if k < 4 else 2)]) for k in range(5)]
            for k in (1, 0, 4, 2, 3):  # asked for in any order
                expected = [[2 * (10 * k + j)] * 2 for j in range(4 if k < 4 else 2)]
                assert server.produce_data(batches[k]).tolist() == expected

    run_with_timeout(body)


def test_failed_server_thread_fails_the_waiting_loop(monkeypatch):
    def broken(self, request, in_flight):
        raise MemoryError("no room for the batch")

    monkeypatch.setattr(dali_proxy.DALIServer, "_start", broken)

    def body():
        with dali_proxy.DALIServer(image_pipe()) as server:
            batch = default_collate([server.proxy(image(0))])
            with pytest.raises(PipelineError, match="server failed: MemoryError: no room"):
                server.produce_data(batch)

    run_with_timeout(body)
