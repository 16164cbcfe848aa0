# Two entry points for a fresh machine (README Quickstart): `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The in-repo plugin packages (each its own distribution); the examples use them.
PLUGINS := plugins/text-stats-grader plugins/jsonschema-grader plugins/html-report
export XDG_CACHE_HOME ?= $(CURDIR)/.cache
# pytest-xdist workers: most tests wait on subprocesses and servers, so more workers than cores pay.
# A file's tests go to one worker (`loadfile`): a module fixture (a Docker image it removes when done)
# is built once and never torn down under another worker's test. (`loadgroup` would group by
# `xdist_group` mark, but with pytest 9.2 it silently groups nothing: pytest-xdist issue 1386.)
# Files go out longest first (tests/conftest.py orders them; `--no-loadscope-reorder` keeps that order).
# TEST_WORKERS=0 runs in this process, one test at a time.
TEST_WORKERS ?= 4
PARALLEL := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

.PHONY: setup demo test test-fast lint typecheck unit bench bench-check clean

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]' $(addprefix -e ,$(PLUGINS))
	mkdir -p $(XDG_CACHE_HOME)/python-entrypoints && touch $(XDG_CACHE_HOME)/python-entrypoints/.disable
	touch $(STAMP)

# setup also installs the GitLab pipeline emulator (.cache/gitlab-ci-local) the component's test uses.
setup: $(STAMP)
	bash .ci/gitlab-ci-local.sh

demo: $(STAMP)
	$(BIN)/agentv-ci validate examples/
	$(BIN)/agentv-ci run examples/ -o .agentv-ci/demo --junit .agentv-ci/demo/junit.xml \
	  --sarif .agentv-ci/demo/results.sarif --markdown .agentv-ci/demo/summary.md \
	  --report html=.agentv-ci/demo/report.html --no-fail ; \
	  echo "demo results in .agentv-ci/demo/ (index.jsonl, junit.xml, results.sarif, summary.md, report.html)"

lint: $(STAMP)
	$(BIN)/ruff check src tests bench plugins
	$(BIN)/ruff format --check src tests bench plugins
	$(BIN)/lint-imports --no-logo --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# Byte code first: most tests run `python -m agentv_ci` in a subprocess, and where
# PYTHONDONTWRITEBYTECODE is set (CI images often set it) each of them would otherwise compile every
# module it imports again (~0.25 s a process on a fresh clone).
BYTECODE := $(BIN)/python -m compileall -q src $(addsuffix /src,$(PLUGINS)) >/dev/null

unit: $(STAMP)
	$(BYTECODE)
	$(BIN)/pytest $(PARALLEL)

test: lint typecheck unit

# The inner loop: lint, then the tests not marked `slow` (fresh clones and venvs, the container image,
# act, pre-commit installs), stopping at the first failure. `make test` (CI) still runs everything.
test-fast: lint
	$(BYTECODE)
	$(BIN)/pytest $(PARALLEL) -x -q -m "not slow"

# The issue-12 workloads (median of 5, peak RSS, ratio to target), the memory scale (10k, 100k; add
# BENCH_MEMORY=--with-1m for 1M tests), the reports on 100k results and discover on 5,000 evals.
# Byte code is compiled first, as an installed package (pip, the image) has it: PYTHONDONTWRITEBYTECODE
# would otherwise make every measured process compile the sources again.
bench: $(STAMP)
	$(BIN)/python -m compileall -q src
	$(BIN)/python bench/workloads.py $(BENCH_ARGS)
	$(BIN)/python bench/memory_scale.py $(BENCH_MEMORY)
	$(BIN)/python bench/reports_100k.py
	$(BIN)/python bench/discover_5k.py

# The per-test overhead guard (issue 31): the dry-run workloads' CPU, BENCH_REF's source vs the work
# tree, in turns; fails past +10 %. BENCH_REF defaults to the merge-base with main, or HEAD~1 on main.
BENCH_REF ?=
bench-check: $(STAMP)
	$(BIN)/python bench/compare.py $(BENCH_REF)

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache build src/*.egg-info plugins/*/src/*.egg-info
