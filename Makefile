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
comma := ,
# ccache: relative paths so a clone in another folder (CI) hits the same cache.
export CCACHE_BASEDIR := $(ROOT)
export CCACHE_NOHASHDIR := 1
export CCACHE_MAXSIZE ?= 5G

.PHONY: all bootstrap configure build models test test-cpp test-python demo bench clean backends backends-setup backends-smoke

all: build

bootstrap:
	@bash scripts/bootstrap.sh

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

demo: build
	@bash examples/demo.sh

bench: build
	@bash bench/run.sh

# Real backends (openvino, rknn-toolkit2's simulator, nncase 1.9, onnx2tf->TFLite, old
# onnxruntime), each in its own venv under .backends/ (scripts/backends/setup.sh; an install
# that fails is recorded there and reported). `make backends` runs the whole corpus through
# each, before and after the rewrite (tests/backends/harness.py; results in build/backends/);
# `make backends-smoke` runs one small model per backend. BACKENDS=a,b picks some.
backends-setup:
	@bash scripts/backends/setup.sh $(subst $(comma), ,$(BACKENDS)) || echo "backends-setup: some installs failed; the harness reports them"

backends: build models backends-setup
	$(PY) tests/backends/kokoro_corpus.py || echo "backends: the Kokoro model failed to export; it is not in this run"
	$(PY) tests/backends/harness.py $(if $(BACKENDS),--backends $(BACKENDS))

backends-smoke: build models backends-setup
	$(PY) tests/backends/harness.py --smoke $(if $(BACKENDS),--backends $(BACKENDS))

clean:
	rm -rf $(BUILD)
