# Two commands do everything on a fresh machine with python3:
#   make up       set up the runtime, then run a local cluster on the embedded store
#                 (flags for `kubedra up` go in ARGS, e.g. make up ARGS="--fake-nodes 5 -v")
#   make test     set up the runtime and the test tools, compile, then run every check
#                 (pytest on PYTEST_WORKERS=4 processes, ruff, mypy --strict, import-linter,
#                 a benchmark smoke run)
# and, for contributors:
#   make quick    the unit and conformance tests, without compiling (pytest -x, in
#                 PYTEST_WORKERS processes as make test)
#   make compile  compile the API server's request path with mypyc (setup.py); `make test`
#                 and the benchmarks run on this build, `make up` uses it once it is there
#   make bench    a benchmark on the compiled build (BENCH="scheduler_perf --runs 3")
#   make kubectl  fetch kubectl v1.34.5 (the release kubedra serves by default) once and print
#                 its path (kubedra fetch-kubectl --version 1.30: the kubectl of 1.30)
#   make protos   regenerate src/kubedra/proto/generated/ from the .proto files
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install -q
# `make up` needs only the runtime (with etcd 3.5 for `--etcd`), installed as plain Python;
# the compiler and the test tools come with the first `make compile` or `make test`.
RUNTIME_STAMP := $(VENV)/.runtime-stamp
TEST_STAMP := $(VENV)/.test-stamp
COMPILE_STAMP := $(VENV)/.compile-stamp
ARGS ?=
# pytest in PYTEST_WORKERS processes (pytest-xdist): most of the suite waits on the processes
# it starts, so four share the two cores. Each module runs whole on one worker, in order (a
# module's tests may build on each other through its fixtures).
PYTEST_WORKERS ?= 4
WORKERS = -n $(PYTEST_WORKERS) --dist loadscope

.PHONY: up kubectl test quick compile lint typecheck layers pytest bench-smoke bench protos clean \
	drop-stale-compiled

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): pyproject.toml setup.py | $(BIN)/python
	$(PIP) -e '.[etcd]'
	touch $@

# the 1.34 e2e tests also run kubernetes==34.1.0, in an environment of its own
$(TEST_STAMP): pyproject.toml tests/e2e/official_client.py | $(RUNTIME_STAMP)
	$(PIP) -e '.[test]'
	$(BIN)/python -m tests.e2e.official_client
	touch $@

# What setup.py compiles, as setup.py lists it (every source, if it cannot be asked).
COMPILED_SOURCES := $(shell $(PYTHON) -c "import setup; \
	print(*setup.compiled_sources(), *setup.NATIVE.values())" \
	2>/dev/null || find src/kubedra -name '*.py' -o -name '*.c')

# The compiled modules sit beside their sources and shadow them, so they are rebuilt (all
# together: they share one library) when one of those sources changes, and only then.
$(COMPILE_STAMP): pyproject.toml setup.py $(COMPILED_SOURCES) | $(RUNTIME_STAMP)
	find src -name '*.so' -delete
	$(PIP) -e '.[compile]'
	KUBEDRA_COMPILE=1 $(PIP) --no-build-isolation --no-deps -e .
	touch $@

compile: $(COMPILE_STAMP)

# Without compiling: a compiled build older than its sources is removed (plain Python,
# which behaves the same, runs instead) until the next `make compile` or `make test`.
drop-stale-compiled:
	@if [ ! -e $(COMPILE_STAMP) ] || [ -n "$$(find pyproject.toml setup.py $(COMPILED_SOURCES) \
		-newer $(COMPILE_STAMP))" ]; then find src -name '*.so' -delete; rm -f $(COMPILE_STAMP); fi

# three simulated nodes, unless ARGS choose the nodes (--nodes N, or --fake-nodes N instead)
UP_NODES = $(if $(filter --nodes --nodes=% --fake-nodes --fake-nodes=%,$(ARGS)),,--nodes 3)

up: $(RUNTIME_STAMP) drop-stale-compiled
	$(BIN)/kubedra up $(UP_NODES) $(ARGS)

# kubectl v1.34.5, of the release kubedra serves by default: fetched once, its path printed.
kubectl: $(RUNTIME_STAMP)
	@$(BIN)/kubedra fetch-kubectl

quick: $(TEST_STAMP) drop-stale-compiled
	$(BIN)/pytest $(WORKERS) tests/unit tests/conformance -x

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(TEST_STAMP)
	$(BIN)/mypy --strict src/

layers: $(TEST_STAMP)
	$(BIN)/lint-imports

# The kubectls are fetched first, once, rather than by several workers at a time (a failed
# fetch leaves their tests to skip, as a plain `pytest` does).
pytest: $(TEST_STAMP) $(COMPILE_STAMP)
	-$(BIN)/kubedra fetch-kubectl --version 1.30 >/dev/null
	-$(BIN)/kubedra fetch-kubectl --version 1.34 >/dev/null
	$(BIN)/pytest $(WORKERS)

# Regenerate the committed gRPC/protobuf modules from src/kubedra/proto/*.proto.
protos: $(TEST_STAMP)
	$(BIN)/python -m kubedra.proto.compile

bench-smoke: $(TEST_STAMP) $(COMPILE_STAMP)
	$(BIN)/python -m bench.smoke

# A benchmark on the compiled build, e.g. make bench BENCH="scheduler_perf --runs 3"
BENCH ?= scheduler_perf --workload half_500nodes --runs 3
bench: $(TEST_STAMP) $(COMPILE_STAMP)
	$(BIN)/python -m bench.$(BENCH)

test: lint typecheck layers bench-smoke pytest

clean:
	rm -rf $(VENV) build src/*.egg-info
	find src -name '*.so' -delete
