# Two commands on a fresh machine:
#   make render   -> sets up .venv and renders build/dev and build/prod offline
#   make check    -> sets up .venv and runs ruff, mypy and every test
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv render check lint typecheck test bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

render: $(STAMP)
	$(BIN)/gpuplane render dev --out build/dev
	$(BIN)/gpuplane render prod --out build/prod

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/pytest -q

check: lint typecheck test

clean:
	rm -rf build $(VENV)
