# Sightline: `make run` starts a server on http://127.0.0.1:8000, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
DATA_DIR ?= ./data

.PHONY: install install-dev system-deps run test lint typecheck bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.stamp-runtime: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.stamp-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev]"
	touch $@ $(VENV)/.stamp-runtime

install: $(VENV)/.stamp-runtime

install-dev: $(VENV)/.stamp-dev

system-deps:
	bash scripts/system-deps.sh

run: install
	$(BIN)/sightline serve --host $(HOST) --port $(PORT) --data-dir $(DATA_DIR)

lint: install-dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: install-dev
	$(BIN)/mypy

test: install-dev system-deps lint typecheck
	$(BIN)/pytest

bench: install-dev
	bash scripts/system-deps.sh wrk
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache test-artifacts
