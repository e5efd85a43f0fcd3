"""Each operator family's ``__init__.py`` lists its operators, and the list is the registry's.

A family is a folder of ``stoker/operators``; its operators are those that modules of the
folder register. The docstring's paragraph that starts "Operators:" names the public ones
(``fn.<name>``), the one that starts "Hidden" the ones the graph makes (``_<name>``).
"""

from __future__ import annotations

import importlib
import pathlib
import re

import pytest

import stoker.fn  # noqa: F401  (registers every operator)
from stoker.operators import FAMILIES
from stoker.operators.machinery.registry import REGISTERED_BY

STOKER = pathlib.Path(__file__).resolve().parents[1] / "stoker"


def _paragraph(doc: str, label: str) -> str:
    for block in doc.split("\n\n"):
        if block.lstrip().startswith(label):
            return block
    return ""


def _registered(family: str) -> set[str]:
    return {n for n, module in REGISTERED_BY.items()
            if module.startswith(f"stoker.operators.{family}.")}


@pytest.mark.parametrize("family", FAMILIES)
def test_family_docstring_lists_its_operators(family):
    doc = importlib.import_module(f"stoker.operators.{family}").__doc__ or ""
    public = set(re.findall(r"\bfn\.([\w.]*\w)", _paragraph(doc, "Operators:")))
    hidden = set(re.findall(r"(?<![\w.`])(_[a-z][\w.]*\w)", _paragraph(doc, "Hidden")))
    registered = _registered(family)
    assert public == {n for n in registered if not n.startswith("_")}, \
        f"stoker/operators/{family}/__init__.py: its 'Operators:' list is not the registry's"
    assert hidden == {n for n in registered if n.startswith("_")}, \
        f"stoker/operators/{family}/__init__.py: its 'Hidden' list is not the registry's"


def test_every_operator_belongs_to_a_family():
    ours = {n for n, module in REGISTERED_BY.items() if module.startswith("stoker.")}
    assert ours and ours == set().union(*map(_registered, FAMILIES))


def test_kernel_folders_are_families():
    for backend in ("cpu", "gpu"):
        folders = {p.name for p in (STOKER / "kernels" / backend).iterdir()
                   if (p / "__init__.py").exists()}
        assert folders <= set(FAMILIES), f"kernels/{backend}: {folders - set(FAMILIES)}"
    cpu = {p.name for p in (STOKER / "kernels" / "cpu").iterdir() if p.is_dir()}
    assert set(FAMILIES) <= cpu | {"sources", "readers"}  # (no kernels of their own)
