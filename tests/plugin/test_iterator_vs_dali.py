"""The PyTorch iterators against 340 cases recorded from DALI 2.4 (tests/data/
dali_iterator_cases.json): same batches, same len() per epoch, same errors.

Where DALI delivers a sample twice or not at all within an epoch (shards of unequal size
under PARTIAL/DROP without padding), stoker deliberately differs: those cases are checked
for exactly-once delivery instead (see stoker/readers/order.py, _window_indices)."""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import pytest
from jax_cases import write_files  # the same one-byte files the JAX cases read

torch = pytest.importorskip("torch")

from stoker import fn, pipeline_def  # noqa: E402
from stoker.plugin.base import parse_auto_reset  # noqa: E402
from stoker.plugin.pytorch import DALIGenericIterator, LastBatchPolicy  # noqa: E402

CASES = json.loads((pathlib.Path(__file__).parents[1] / "data" /
                    "dali_iterator_cases.json").read_text())


def _replayable(case) -> bool:
    c = case["config"]
    return (c["mode"] == "reader_name" and not case["errors"] and not c["random_shuffle"]
            and not c.get("reader_extra") and c.get("fill_last_batch") is None
            and c.get("stop_after") is None and not c.get("style")
            and not c.get("next_after_stop") and case["group"] != "H"
            and c["iterator"] == "DALIGenericIterator" and not c.get("var_len"))


REPLAY = [c for c in CASES if _replayable(c)]


def _pipes(root, c):
    shards = [c["only_shard"]] if c.get("only_shard") is not None else range(c["num_shards"])
    pipes = []
    for shard in shards:
        @pipeline_def(batch_size=c["batch_size"], num_threads=1, device_id=None, seed=5)
        def pipe(shard=shard):
            data, label = fn.readers.file(
                file_root=root, file_filters=["*.bin"], name="Reader", shard_id=shard,
                num_shards=c["num_shards"], pad_last_batch=c["pad_last_batch"],
                stick_to_shard=c["stick_to_shard"])
            return data, label
        pipes.append(pipe())
    return pipes


def _run(root, c):
    policy = LastBatchPolicy[c["last_batch_policy"] or "FILL"]
    it = DALIGenericIterator(_pipes(root, c), ["data", "label"], reader_name="Reader",
                             last_batch_policy=policy, auto_reset=c["auto_reset"],
                             prepare_first_batch=c["prepare_first_batch"])
    single = len(it._pipes) == 1
    epochs, lens = [], []
    for _ in range(c["n_epochs"]):
        lens.append(len(it))
        steps = []
        while True:
            try:
                batch = next(it)
            except StopIteration:
                break
            ids = [d["data"][:, 0].tolist() for d in batch]
            steps.append(ids[0] if single else ids)
        epochs.append(steps)
        if not parse_auto_reset(c["auto_reset"]):
            it.reset()
    return epochs, lens


def _dali_exact(case) -> bool:
    """Whether DALI delivered no sample twice in an epoch (DROP loses samples by design)."""
    stats = case.get("multiset_per_epoch")
    missing_ok = (case["config"]["last_batch_policy"] or "FILL") == "DROP"
    return stats is None or all((missing_ok or not s["missing"]) and not s["duplicated"] and
                                not s["cross_rank_overlap"] for s in stats)


def _flatten(steps):
    out = []
    for step in steps:
        if step and isinstance(step[0], list):
            for ids in step:
                out.extend(ids)
        else:
            out.extend(step)
    return out


@pytest.mark.parametrize("case", REPLAY, ids=lambda c: json.dumps(c["config"], sort_keys=True))
def test_iterator_replays_dali(case, tmp_path_factory):
    c = case["config"]
    root = write_files(tmp_path_factory.getbasetemp(), c["N"])
    epochs, lens = _run(root, c)
    policy = c["last_batch_policy"] or "FILL"
    uneven = c["N"] % c["num_shards"] != 0
    if policy != "FILL" and not c["pad_last_batch"] and uneven and not _dali_exact(case):
        # DALI loses and repeats samples here; stoker delivers each exactly once.
        assert lens == case["len_per_epoch"]
        for steps in epochs:
            seen = Counter(_flatten(steps))
            if policy == "PARTIAL" and c.get("only_shard") is None:
                assert sorted(seen) == list(range(c["N"])) and max(seen.values()) == 1
            else:
                assert max(seen.values(), default=1) == 1
        return
    assert epochs == case["epochs"]
    assert lens == case["len_per_epoch"]


def test_replay_covers_the_truth_table():
    assert len(REPLAY) >= 150
