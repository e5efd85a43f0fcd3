"""docs/operators.md is what ``stoker docs`` writes from the registry (stoker/cli/docs.py):
a schema changed without rewriting it fails here."""

from __future__ import annotations

import os
import subprocess
import sys

import stoker.fn  # noqa: F401  (registers every operator)
from stoker.cli.docs import OUT, ROOT, readme_differences, render, run_docs
from stoker.operators.machinery.registry import REGISTERED_BY


def test_operator_reference_is_up_to_date():
    assert OUT.read_text() == render(), \
        "docs/operators.md is stale: rewrite it with `stoker docs` (python -m stoker.cli.main docs)"


def test_reference_has_one_entry_per_public_operator():
    text = render()
    ours = sorted(n for n, m in REGISTERED_BY.items()
                  if m.startswith("stoker.operators.") and not n.startswith("_"))
    assert [n for n in ours if text.count(f"\n### fn.{n}\n") != 1] == []
    assert text.count("\n### ") == len(ours)


def test_readme_differences_are_found_per_operator():
    bullets, rows = readme_differences((ROOT / "README.md").read_text())
    assert any({"crop", "crop_mirror_normalize"} <= names for names, _ in bullets)
    resize_rows = [text for names, text in rows if "resize" in names]
    assert len(resize_rows) == 2 and resize_rows[0].startswith("nearest neighbour")


def test_docs_check_fails_on_a_stale_file_and_passes_on_a_fresh_one(tmp_path, capsys):
    out = tmp_path / "operators.md"
    assert run_docs(str(out), check=True) == 1
    assert run_docs(str(out)) == 0
    assert run_docs(str(out), check=True) == 0
    out.write_text(out.read_text() + "edited by hand\n")
    assert run_docs(str(out), check=True) == 1
    assert "stale" in capsys.readouterr().out


def test_the_command_gives_the_same_bytes_in_another_process():
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    done = subprocess.run([sys.executable, "-m", "stoker.cli.main", "docs", "--check"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
