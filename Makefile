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

.PHONY: all bootstrap configure build test test-cpp test-python demo bench clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

$(BUILD)/CMakeCache.txt: CMakeLists.txt | bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PY) >/dev/null

configure: bootstrap $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j$(JOBS)
	@$(PY) scripts/link-venv.py

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-python: build
	$(PY) -m pytest -q tests/python

test: test-cpp test-python

demo: build
	@bash examples/demo.sh

bench: build
	@bash bench/run.sh

clean:
	rm -rf $(BUILD)
