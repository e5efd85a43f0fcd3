"""Shared test set-up.

fn.dump_image writes its files into the working directory, as DALI's does; tests that
run it (its own and the contract battery's) run in a temporary directory instead of the
repository.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _dump_image_writes_elsewhere(request, tmp_path, monkeypatch):
    if "dump_image" in request.node.nodeid:
        monkeypatch.chdir(tmp_path)
