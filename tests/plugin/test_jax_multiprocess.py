"""The JAX iterator in a two-process job (``jax.distributed`` on CPU, two devices each):
every process builds the pipelines of its own devices, and the global arrays hold what DALI
2.4's iterator gives over the same four shards (its recorded "stack" form: pipeline ``k``'s
batch is rows ``k * batch ..``), with a jitted sum over both processes agreeing."""

from __future__ import annotations

import json
import pathlib
import socket
import subprocess
import sys

import pytest

pytest.importorskip("jax")

HERE = pathlib.Path(__file__).parent
DALI = json.loads((HERE.parent / "data" / "dali_jax_iterator.json").read_text())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    root, port = tmp_path_factory.mktemp("jaxmp"), str(_free_port())
    procs = [subprocess.Popen([sys.executable, str(HERE / "jax_multiprocess_worker.py"),
                               str(pid), port, str(root)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=HERE.parents[1])
             for pid in (0, 1)]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a JAX process did not finish in 300 s")
        if p.returncode != 0 and "gloo" in err.lower() and "not" in err.lower():
            pytest.skip(f"this jaxlib has no CPU collectives: {err[-300:]}")
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return outs


CASES = ("sharding-n16-bs2-FILL-pad0", "sharding-n18-bs2-DROP-pad1",
         "decorator-n18-bs2-FILL-pad0", "decorator-n16-bs2-DROP-pad1")


@pytest.mark.parametrize("name", CASES)
def test_each_process_holds_its_rows_of_dalis_global_batch(outcomes, name):
    want = DALI["cases"]["stack-" + name.split("-", 1)[1]]
    bs = int(name.split("-")[2][2:])
    assert [o["devices"] for o in outcomes] == [4, 4]
    for epoch, want_steps in enumerate(want["epochs"]):
        for o in outcomes:
            assert len(o["cases"][name][epoch]) == len(want_steps)
        for step, ref in enumerate(want_steps):
            ids = ref["data"]["ids"]  # pipeline-major: pipeline k's batch, then k + 1's
            per_row = len(ids) // (4 * bs)
            held = {}
            for o in outcomes:
                got = o["cases"][name][epoch][step]
                assert got["shape"][0] == 4 * bs
                assert got["sum"] == sum(ids)  # the same global array in both processes
                for start, values in got["rows"]:
                    assert values == ids[start * per_row:(start + bs) * per_row]
                    held[start] = o["process"]
            # Each process holds two of the four batches, its own devices' ones.
            assert sorted(held) == [0, bs, 2 * bs, 3 * bs]
            assert sorted(held.values()) == [0, 0, 1, 1]
