"""Every ``fn`` name DALI 2.4 runs on the CPU is in stoker, or left out here with a reason.

``tests/data/dali_fn_names.json`` (recorder ``tests/data/record/fn_names.py``) lists each
``fn`` path of DALI 2.4 and its plugins with the backends it runs on. A path counts as
present when ``stoker.fn`` answers to it: an operator of the registry, or one of DALI's
deprecated names (``stoker/operators/machinery/aliases.py``) whose operator stoker has.
Names only DALI's GPU runs are left out by the recorded data itself. ``LEFT_OUT`` names
the rest, each with why; an entry that stoker has meanwhile gained fails the test, so the
table shrinks as the operators arrive.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import stoker.fn as fn
from stoker.operators.machinery.aliases import FN_ALIASES

DATA = pathlib.Path(__file__).resolve().parent / "data" / "dali_fn_names.json"
NAMES: dict[str, dict] = json.loads(DATA.read_text())["names"]


# fn path -> why stoker does not have it (yet).
LEFT_OUT: dict[str, str] = {
    # A reader of image-file sequences (frames from a directory tree), deprecated in DALI.
    "readers.sequence": "image-file sequences: in no issue yet (the video family is its "
                        "natural home); DALI 2.4 deprecates it",
    "sequence_reader": "DALI's deprecated name of readers.sequence (see there)",
    "experimental.numba_function": "DALI's numba plugin operator: in no issue yet "
                                   "(python_function covers the use)",
}


def _stoker_has(path: str) -> bool:
    obj = fn
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return callable(obj)


def _on_cpu(path: str) -> bool:
    return "cpu" in NAMES[path]["backends"]


CPU_NAMES = sorted(p for p in NAMES if _on_cpu(p))


def test_recorded_list_is_dali_24():
    doc = json.loads(DATA.read_text())
    assert doc["dali_version"].startswith("2.4")
    assert len(CPU_NAMES) > 150  # 161 when recorded; a short list means a broken recorder


@pytest.mark.parametrize("path", CPU_NAMES)
def test_dali_cpu_name_is_in_stoker_or_left_out_with_reason(path):
    if path in LEFT_OUT:
        assert LEFT_OUT[path].strip(), f"fn.{path} is left out without a reason"
        assert not _stoker_has(path), (f"stoker now has fn.{path}: remove it from LEFT_OUT "
                                       "in tests/test_completeness.py")
    else:
        assert _stoker_has(path), (f"DALI 2.4 runs fn.{path} on the CPU; stoker has no such "
                                   "name (add it, or list it in LEFT_OUT with the reason)")


def test_left_out_names_are_dali_cpu_names():
    unknown = sorted(p for p in LEFT_OUT if p not in NAMES or not _on_cpu(p))
    assert not unknown, f"LEFT_OUT names that DALI 2.4 does not run on the CPU: {unknown}"


def test_deprecated_names_follow_their_operator():
    # A deprecated DALI name is present exactly when the operator it stands for is.
    for old, new in FN_ALIASES.items():
        if old in NAMES and _on_cpu(old):
            assert _stoker_has(old) == _stoker_has(new), (old, new)
            if old in LEFT_OUT or new in LEFT_OUT:
                assert old in LEFT_OUT and (new in LEFT_OUT or not _on_cpu(new)), (old, new)


def test_gpu_only_names_are_the_recorded_ones():
    # What DALI runs only on the GPU needs no CPU operator; stoker's GPU operators are
    # CPU operators with a GPU kernel, so none of these is expected in stoker.
    gpu_only = sorted(p for p in NAMES if not _on_cpu(p))
    assert "experimental.median_blur" in gpu_only and "optical_flow" in gpu_only
    assert not [p for p in gpu_only if p in LEFT_OUT]
