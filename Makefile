# Two commands do everything on a fresh machine with python3:
#   make up     set up, then run a local cluster on the embedded store
#   make test   set up, then run every check (pytest, ruff, mypy --strict, import-linter)
#   make protos regenerate src/kubedra/proto/generated/ from the .proto files
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: up test lint typecheck layers pytest bench-smoke protos clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

up: $(STAMP)
	$(BIN)/kubedra up --nodes 3

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict src/

layers: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/pytest

# Regenerate the committed gRPC/protobuf modules from src/kubedra/proto/*.proto.
protos: $(STAMP)
	$(BIN)/python -m kubedra.proto.compile

bench-smoke: $(STAMP)
	$(BIN)/python -m bench.smoke

test: lint typecheck layers bench-smoke pytest

clean:
	rm -rf $(VENV) build src/*.egg-info
