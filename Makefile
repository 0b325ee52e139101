# Sightline: `make run` starts a server on http://127.0.0.1:8000, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
DATA_DIR ?= ./data
# `make test` runs the tests in this many pytest-xdist workers, each test module whole in one worker
# (its module-scoped server and browser start once). The tests mostly wait on servers, browsers and
# PostgreSQL, so more workers than cores pays; TEST_WORKERS=0 runs them in this process, in order.
TEST_WORKERS ?= 4

.PHONY: install install-dev system-deps assets run test lint typecheck bench clean

# Front-end packages with a package.json and a "build" script: the SDK and the console UI.
# Each build writes into src/sightline/web/static/, so a user of `make run` needs no Node tooling.
FRONTENDS := $(wildcard sdk/package.json ui/package.json)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# pip compiles every module it installs one after the other (12,000 files, about 45 s of one core
# on CI's machine); compileall does the same on every core (and, as pip, a file it cannot compile is
# left for Python to compile when it is imported).
COMPILE = $(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null || true

$(VENV)/.stamp-runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --no-compile -e .
	$(COMPILE)
	touch $@

$(VENV)/.stamp-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --no-compile -e ".[dev]"
	$(COMPILE)
	touch $@ $(VENV)/.stamp-runtime

install: $(VENV)/.stamp-runtime assets

install-dev: $(VENV)/.stamp-dev assets

assets:
	@[ -z "$(FRONTENDS)" ] || bash scripts/system-deps.sh node
	@for pkg in $(FRONTENDS); do \
	  dir=$$(dirname $$pkg); \
	  if [ ! -d $$dir/node_modules ] || [ $$dir/package-lock.json -nt $$dir/node_modules ]; then \
	    (cd $$dir && npm ci --no-audit --no-fund --loglevel=error) || exit 1; \
	  fi; \
	  (cd $$dir && npm run --silent build) || exit 1; \
	done

system-deps:
	bash scripts/system-deps.sh test

run: install
	$(BIN)/sightline serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR)

lint: install-dev
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/lint-imports

typecheck: install-dev
	$(BIN)/mypy

# mypy (one core, about 45 s) runs beside the tests instead of before them: the tests' workers keep
# both cores busy anyway, so it costs the run half of its time. Its report follows the tests'; either
# failing fails `make test`.
test: system-deps install-dev lint
	@$(BIN)/mypy > $(VENV)/mypy.out 2>&1 & typing=$$!; \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope; tests=$$?; \
	wait $$typing; typed=$$?; \
	echo "$(BIN)/mypy"; cat $(VENV)/mypy.out; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# `make bench` runs every benchmark (docs/performance.md); `make bench BENCH=reports` the modules
# whose names contain a word of BENCH; `BENCH_QUICK=1 make bench` each at a small size, to check them.
BENCH ?=
bench: install-dev
	bash scripts/system-deps.sh bench
	$(BIN)/python -m bench $(BENCH)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
