# The two commands a newcomer needs:
#   make demo   install what is missing, build, and rewrite the example model
#   make test   install what is missing, build, run every C++ and Python test
# After a build the CLI is build/onnxsurgeon and `.venv/bin/python -c "import onnxsurgeon"` works.

SHELL := /bin/bash
ROOT := $(CURDIR)
BUILD := $(ROOT)/build
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
JOBS ?= $(shell nproc)
# ccache: relative paths so a clone in another folder (CI) hits the same cache.
export CCACHE_BASEDIR := $(ROOT)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 5G

.PHONY: all bootstrap configure build models test test-cpp test-python demo bench wheel-check clean

all: build

# Which Python requirement set bootstrap installs: test (everything) or demo (no torch).
REQS ?= test

bootstrap:
	@bash scripts/bootstrap.sh $(REQS)

$(BUILD)/CMakeCache.txt: CMakeLists.txt | bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PY) >/dev/null

configure: bootstrap $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)
	@$(PY) scripts/link-venv.py

# The test models (torch/transformers exports and onnx's backend node tests, cached in the
# ignored tests/models/.generated): the C++ suite compares shape propagation with onnx on
# them, so they are made before it runs.
models: build
	$(PY) tests/models/generate.py --out tests/models/.generated || echo "models: some failed to generate; the tests that use them say which"
	$(PY) -c "import sys; sys.path.insert(0, 'tests/python'); import backend_node_cases; backend_node_cases.node_test_dir()"

test-cpp: build models
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-python: build
	$(PY) -m pytest -q tests/python

test: test-cpp test-python

# The demo needs the CLI and onnxruntime only: the demo requirement set, no torch.
demo:
	@$(MAKE) --no-print-directory build REQS=demo
	@bash examples/demo.sh

bench: build
	@bash bench/run.sh

# The wheel `pip install .` builds, made self-contained and installed into a fresh venv
# (scripts/wheel-check.sh). Not part of `make test`: it compiles everything once more in
# its own build folder and downloads onnx and numpy into the fresh venv.
wheel-check: bootstrap
	@bash scripts/wheel-check.sh

clean:
	rm -rf $(BUILD)
