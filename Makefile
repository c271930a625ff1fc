# Two entry points: `make serve` and `make test`. Each installs what it needs first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(BIN)/python:
	@echo "make: creating the virtual environment in $(VENV)"
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# pip's own lines (one per package) rather than -q: a first install takes a minute or two of work
$(STAMP): $(BIN)/python pyproject.toml
	@echo "make: installing Scenario Studio and its dependencies into $(VENV) (numba, ray, duckdb, fastapi, ...; 1-3 minutes on a first install)"
	$(BIN)/pip install --progress-bar off -e '.[test]'
	@echo "make: installed; \`make serve\` starts the service, \`make test\` runs the suite"
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/studio serve

simulate: $(STAMP)
	$(BIN)/studio simulate --scenario svc:custom-base-v1

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b; done

.PHONY: install serve simulate test bench
