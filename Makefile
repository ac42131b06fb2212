# Two commands do all the set-up on a fresh machine:
#   make run   - create .venv, install, run the main job on the embedded (synthetic) default
#   make test  - install the test dependencies and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/arena demo

# Debian's Chromium: the season report's tests open it in a real (headless) browser
CHROMIUM := /usr/bin/chromium

test: $(VENV)/.installed-test
	test -x $(CHROMIUM) || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-liberation)
	$(BIN)/ruff check arena flows expectations models dbt_project tests benchmarks
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-test
	$(BIN)/ruff check arena flows expectations models dbt_project tests benchmarks

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
