"""DALI's deprecated fn names (fn.file_reader, fn.coin_flip, ...) against the table
recorded from DALI 2.4 (tests/data/dali_fn_aliases.json, tests/data/record/fn_aliases.py)."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from helpers import run_pipeline

from stoker import fn, pipeline_def
from stoker.operators.machinery.aliases import DEPRECATED_OPERATORS, FN_ALIASES
from stoker.operators.machinery.registry import REGISTRY

RECORDED = json.loads((pathlib.Path(__file__).parents[1] / "data" / "dali_fn_aliases.json")
                      .read_text())["aliases"]
# Aliases of operators stoker has: each must exist and run that operator.
PRESENT = sorted(old for old, new in FN_ALIASES.items() if new in REGISTRY)


def _lookup(path: str):
    obj = fn
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def test_alias_table_is_dalis():
    recorded = {old: e["in_favor_of"] for old, e in RECORDED.items()
                if e["in_favor_of"] and e["in_favor_of"] != old}
    assert FN_ALIASES == recorded


def test_the_aliases_of_the_issue_are_there():
    assert {"transform_translation", "file_reader", "image_decoder", "coin_flip", "uniform",
            "normal_distribution", "image_decoder_random_crop"} <= set(PRESENT)


@pytest.mark.parametrize("old", PRESENT)
def test_alias_warns_as_dali_does(old):
    # DALI's text, quoted in stoker's, names DALI's module: code that matches DALI's
    # warning (its own tests do) matches stoker's too.
    first_line = RECORDED[old]["warning"]["message"].splitlines()[0]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        try:
            _lookup(old)()
        except (TypeError, ValueError):
            pass  # most need inputs or arguments; the warning comes first
    assert [w.category for w in got] == [DeprecationWarning], [str(w.message) for w in got]
    assert first_line in str(got[0].message)
    assert f"fn.{FN_ALIASES[old]}" in str(got[0].message).split("(")[0]
    assert got[0].filename == __file__  # points at the caller's line


def test_alias_is_not_a_new_operator():
    assert fn.coin_flip.__signature__ == fn.random.coin_flip.__signature__
    assert "Deprecated" in fn.file_reader.__doc__
    assert not any(name in REGISTRY for name in FN_ALIASES)


def test_alias_gives_the_operators_results(tmp_path):
    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=5)
    def pipe(old: bool):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            flip = (fn.coin_flip if old else fn.random.coin_flip)(probability=0.5, shape=[8])
            uni = (fn.uniform if old else fn.random.uniform)(range=[2, 3], seed=7)
            move = (fn.transform_translation if old else fn.transforms.translation)(
                offset=[1.0, 2.0])
        return flip, uni, move

    new, old = pipe(False), pipe(True)
    for a, b in zip(new.run(), old.run(), strict=True):
        np.testing.assert_array_equal(a.as_array(), b.as_array())


def test_file_reader_alias_reads_like_readers_file(tmp_path):
    for i in range(3):
        (tmp_path / f"{i}.bin").write_bytes(bytes([i]) * (i + 1))
    files = sorted(str(p) for p in tmp_path.iterdir())
    with pytest.warns(DeprecationWarning, match="fn.file_reader"):
        old = run_pipeline(lambda: tuple(fn.file_reader(files=files)), batch_size=3)
    new = run_pipeline(lambda: tuple(fn.readers.file(files=files)), batch_size=3)
    for a, b in zip(old, new, strict=True):
        assert [np.asarray(s).tolist() for s in a] == [np.asarray(s).tolist() for s in b]


def test_operators_dali_deprecates_outright_warn():
    # fn.shapes (DALI: use DataNode.shape()); DataNode.shape() itself does not warn.
    recorded = {old for old, e in RECORDED.items() if e["in_favor_of"] in (None, old)}
    assert set(DEPRECATED_OPERATORS) == recorded
    images = [np.zeros((2, 3, 1), np.uint8)]
    with pytest.warns(DeprecationWarning, match=r"fn\.shapes is deprecated.*DataNode\.shape\(\).*"
                                                r"WARNING: `nvidia\.dali\.fn\.shapes` is now "
                                                "deprecated"):
        (out,) = run_pipeline(lambda x: fn.shapes(x), images)
    assert np.asarray(out[0]).tolist() == [2, 3, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = run_pipeline(lambda x: x.shape(), images)
    assert np.asarray(out[0]).tolist() == [2, 3, 1]
