# The two commands a newcomer runs: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup kernels demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	$(PY) -m stoker.cli.main build-kernels
	touch $@

setup: $(VENV)/.installed

# Compiles the image kernels for this CPU again (setup does it once; after changing or
# updating stoker's kernels, the first pipeline compiles what changed, or run this).
kernels: setup
	$(PY) -m stoker.cli.main build-kernels

demo: setup
	$(PY) -m stoker.cli.main demo

test: setup
	$(PY) -m ruff check stoker tests benchmarks examples fuzz
	$(PY) -m pytest tests

bench: setup
	$(PY) -m stoker.cli.main bench cifar

clean:
	rm -rf $(VENV) build *.egg-info
