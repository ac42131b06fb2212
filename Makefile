# Two commands do all the set-up on a fresh machine:
#   make run   - create .venv, install, run the main job on the embedded (synthetic) default
#   make test  - install the test dependencies and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: run test test-fast lint bench bench-verdict docs dbt-docs ui serve clean

# The installs say one line each and then only what goes wrong: pip's errors (-qq keeps them,
# not its notices about the machine's package indexes), never setuptools' box about editable
# installs (folders named like the package), which is no news here
PIP := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install -qq \
       --disable-pip-version-check

$(BIN)/python:
	@echo "creating $(VENV) and installing arena (the first time takes a few minutes)"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) --upgrade pip

# the package's bytecode compiled once at installation: a machine that sets
# PYTHONDONTWRITEBYTECODE would otherwise compile every module at every command's start
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	@$(PIP) -e .
	@$(BIN)/python -m compileall -q arena
	@touch $@

# the test extra holds the docs extra's mkdocs-material: make test's docs build installs nothing
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	@echo "installing the test dependencies into $(VENV)"
	@$(PIP) -e '.[test]'
	@touch $@ $(VENV)/.installed-docs

# MODEL=PROVIDER/MODEL (and API_BASE=URL for a local OpenAI-compatible server): a language
# model plays the demo beside the house rules (arena demo --model)
run: $(VENV)/.installed
	@$(BIN)/arena demo $(if $(MODEL),--model $(MODEL)) $(if $(API_BASE),--api-base $(API_BASE))

# One more test worker than cores, at most four: many tests wait on a server, a browser or a
# subprocess, so a third worker on two cores fills the time they wait; idle workers steal the
# queued tests of busy ones, so the suite does not end on one worker's backlog
TEST_WORKERS ?= $(shell python3 -c 'import os; print(min(4, (os.cpu_count() or 1) + 1))')

# Debian's Chromium: the season report's tests open it in a real (headless) browser
CHROMIUM := /usr/bin/chromium

test: $(VENV)/.installed-test
	test -x $(CHROMIUM) || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-liberation)
	$(MAKE) lint docs
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# The pure core (engine, scorer, contract, sessions, indicators): well under a minute
FAST := tests/core tests/engine tests/scoring/test_scorer.py tests/scoring/test_metrics.py \
        tests/scoring/test_reference_rules.py
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q $(FAST)

# ruff, and the layer rule of ARCHITECTURE.md (import-linter contracts in pyproject.toml)
lint: $(VENV)/.installed-test
	$(BIN)/ruff check arena flows expectations models dbt_project tests benchmarks docs
	$(BIN)/lint-imports

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/ingest.py

# The verdict on skill's calibration (README: "A verdict on skill"): real daily prices come from
# the data file skfolio ships (BSD-3), read without importing it, so its own dependencies are
# not installed; about 25 minutes on 2 cores. BENCH_ARGS="--leagues 100" for a quicker look.
bench-verdict: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet --no-deps 'skfolio==1.12.2'
	$(BIN)/python benchmarks/verdict_calibration.py --before $(BENCH_ARGS)

# The documentation site (mkdocs-material): docs/, the CLI reference generated from the commands
# and the marts' reference from the dbt YAML, built strict (a broken link or anchor fails) into
# site/; open site/index.html, or `.venv/bin/mkdocs serve` for a live preview
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

$(VENV)/.installed-docs: pyproject.toml $(VENV)/.installed
	@$(PIP) -e '.[docs]'
	@touch $@

# dbt's documentation of the demo's warehouse (after `make run`): models, columns, tests and the
# lineage graph, as one HTML file in the lake, data_lake/demo/dbt/target/static_index.html
DOCS_LAKE ?= data_lake/demo

dbt-docs: $(VENV)/.installed
	$(BIN)/python -c "from arena.data.lake import Lake; from arena.pipeline.warehouse import generate_docs; print(generate_docs(Lake('$(DOCS_LAKE)')))"

# A local Prefect server and its UI (http://127.0.0.1:4200), then the season's deployments
# served against it from another terminal: make serve LAKE=data_lake/s1. Another port: PORT=4300
# on both (the UI's own API URL follows it, so the UI reaches its server).
PORT ?= 4200
PREFECT_API := http://127.0.0.1:$(PORT)/api
LAKE ?= data_lake

ui: $(VENV)/.installed
	PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_UI_API_URL=$(PREFECT_API) \
		$(BIN)/prefect server start --host 127.0.0.1 --port $(PORT)

serve: $(VENV)/.installed
	PREFECT_API_URL=$(PREFECT_API) $(BIN)/arena serve --lake $(LAKE)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
