# Two commands do everything on a fresh machine with python3:
#   make up     set up the runtime, then run a local cluster on the embedded store
#               (flags for `kubedra up` go in ARGS, e.g. make up ARGS="--fake-nodes 5 -v")
#   make test   set up the runtime and the test tools, then run every check
#               (pytest, ruff, mypy --strict, import-linter, a benchmark smoke run)
#   make protos regenerate src/kubedra/proto/generated/ from the .proto files
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install -q
# `make up` needs only the runtime (and mypyc, to compile it); the test tools come with the
# first `make test`.
RUNTIME_STAMP := $(VENV)/.runtime-stamp
TEST_STAMP := $(VENV)/.test-stamp
ARGS ?=

.PHONY: up kubectl test lint typecheck layers pytest bench-smoke protos clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The install compiles the API server's request path in place (setup.py), so it is redone
# when a source changes: a compiled module would otherwise shadow its edited source.
SOURCES := $(shell find src/kubedra -name '*.py')

$(RUNTIME_STAMP): pyproject.toml setup.py $(SOURCES) | $(BIN)/python
	find src -name '*.so' -delete
	$(PIP) -e '.[compile,etcd]'
	KUBEDRA_COMPILE=1 $(PIP) --no-build-isolation --no-deps -e .
	touch $@

# (a plain install, as every one without KUBEDRA_COMPILE: the compiled modules stay in place)
$(TEST_STAMP): pyproject.toml | $(RUNTIME_STAMP)
	$(PIP) -e '.[test]'
	touch $@

# three simulated nodes, unless ARGS choose the nodes (--nodes N, or --fake-nodes N instead)
UP_NODES = $(if $(filter --nodes --nodes=% --fake-nodes --fake-nodes=%,$(ARGS)),,--nodes 3)

up: $(RUNTIME_STAMP)
	$(BIN)/kubedra up $(UP_NODES) $(ARGS)

# kubectl v1.30.0, the release kubedra serves: fetched once, its path printed.
kubectl: $(RUNTIME_STAMP)
	@$(BIN)/kubedra fetch-kubectl

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(TEST_STAMP)
	$(BIN)/mypy --strict src/

layers: $(TEST_STAMP)
	$(BIN)/lint-imports

pytest: $(TEST_STAMP)
	$(BIN)/pytest

# Regenerate the committed gRPC/protobuf modules from src/kubedra/proto/*.proto.
protos: $(TEST_STAMP)
	$(BIN)/python -m kubedra.proto.compile

bench-smoke: $(TEST_STAMP)
	$(BIN)/python -m bench.smoke

test: lint typecheck layers bench-smoke pytest

clean:
	rm -rf $(VENV) build src/*.egg-info
	find src -name '*.so' -delete
