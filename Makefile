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

.PHONY: all bootstrap test-tools configure build models test test-cpp test-python docs demo bench bench-wide wheel-check clean backends backends-setup backends-smoke backends-judging asan-build fuzz-seeds fuzz test-asan lint format judging-corpus judge

all: build

# Which Python requirement set bootstrap installs: test (everything) or demo (no torch).
REQS ?= test

bootstrap:
	@bash scripts/bootstrap.sh $(REQS)

$(BUILD)/CMakeCache.txt: CMakeLists.txt | bootstrap
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PY) >/dev/null

# graphviz and chromium, for the HTML report's test (tests/python/test_cli_report.py).
test-tools:
	@bash scripts/bootstrap.sh --test-tools

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

test-python: build test-tools
	$(PY) -m pytest -q tests/python

test: test-cpp test-python

# The generated parts of docs/ (scripts/generated_docs.py: the pass reference and
# descriptions, the profile reference), rewritten from the CLI and docs/passes/*.md;
# tests/python/test_docs.py (in make test) fails while they are stale.
docs: build
	$(PY) scripts/update-docs.py

# The demo needs the CLI and onnxruntime only: the demo requirement set, no torch.
demo:
	@$(MAKE) --no-print-directory build REQS=demo
	@bash examples/demo.sh

bench: build
	@bash bench/run.sh

# Real backends (openvino, rknn-toolkit2's simulator, nncase 1.9, onnx2tf->TFLite, old
# onnxruntime), each in its own venv under .backends/ (scripts/backends/setup.sh; an install
# that fails is recorded there and reported). `make backends` runs the whole corpus through
# each, before and after the rewrite (tests/backends/harness.py; every row in build/backends/,
# and each backend's current table in docs/results/NAME.{json,md}, committed);
# `make backends-smoke` runs one small model per backend. BACKENDS=a,b picks some.
backends-setup:
	@bash scripts/backends/setup.sh $(subst $(comma), ,$(BACKENDS)) || echo "backends-setup: some installs failed; the harness reports them"

backends: build models backends-setup
	$(PY) tests/backends/kokoro_corpus.py || echo "backends: the Kokoro model failed to export; it is not in this run"
	$(PY) tests/backends/batch1_corpus.py --stacks || echo "backends: some batch-1 models failed to export; they are not in this run"
	$(PY) tests/backends/harness.py --results docs/results $(if $(BACKENDS),--backends $(BACKENDS))

backends-smoke: build models backends-setup
	$(PY) tests/backends/harness.py --smoke $(if $(BACKENDS),--backends $(BACKENDS))

# The judging corpus (below) on the real backends, every named blocker probed; each backend's
# table in docs/results/judging/NAME.{json,md}, apart from the development corpus's.
backends-judging: judging-corpus backends-setup
	$(PY) tests/backends/harness.py --judging --probe --results docs/results/judging $(if $(BACKENDS),--backends $(BACKENDS))
# The judging corpus (tests/judging: models no rule is tuned on, cached in
# ~/.cache/onnxsurgeon/judging) and the judge: every pass, the mission pipelines and every
# --target on every judging model, judged strictly (results in build/judging/results.jsonl,
# resumed when interrupted; the table: tests/judging/judge.py --summary). make test runs a
# smoke of both (tests/python/test_judging_smoke.py).
judging-corpus: build
	$(PY) tests/judging/generate.py || echo "judging-corpus: some models failed to generate; the judge lists them"

judge: judging-corpus
	$(PY) tests/judging/judge.py
	$(PY) tests/judging/judge.py --summary

# simplify beside onnxsim and onnxslim on the wide corpus (~15 min on 2 cores):
# exports the corpus into bench/.data/wide, then benches and rewrites its docs/benchmarks.md section.
bench-wide: build
	$(PY) bench/wide_corpus.py
	python3 bench/simplify_wide_bench.py --write-docs

# The wheel `pip install .` builds from a fresh clone, protobuf and abseil linked statically
# (scripts/build-static-deps.sh), checked with ldd/nm/auditwheel and installed into a fresh
# venv (scripts/wheel-check.sh). Not part of `make test`: it compiles everything once more in
# its own build folder and downloads onnx and numpy into the fresh venv.
wheel-check: bootstrap
	@bash scripts/wheel-check.sh

# Sanitizers and fuzzing (docs/reliability.md): one clang build with ASan+UBSan and libFuzzer
# in build-asan/. `make test-asan` runs the C++ suite (golden tests included), the
# bad-input catalogue and every fuzz seed corpus under the sanitizers; `make fuzz` runs each
# fuzz target for FUZZ_SECONDS (FUZZ_SECONDS=1800 for the long run).
ASAN_BUILD := $(ROOT)/build-asan
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := load_fuzzer text_fuzzer pipeline_fuzzer
export ASAN_OPTIONS ?= detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1

# onnx's own library comes from build/ (compiled by gcc, not instrumented).
asan-build: build
	@bash fuzz/setup-clang.sh
	@[ -f $(ASAN_BUILD)/CMakeCache.txt ] || cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 -DONNXSURGEON_BUILD_PYTHON=OFF \
	  -DONNXSURGEON_ONNX_PREBUILT=$(BUILD)/third_party/onnx \
	  -DONNXSURGEON_SANITIZE=ON -DONNXSURGEON_FUZZ=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

fuzz-seeds: asan-build
	$(PY) fuzz/make_seeds.py --out $(ASAN_BUILD)/fuzz/seeds

test-asan: asan-build models fuzz-seeds
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)
	ONNXSURGEON_CLI=$(ASAN_BUILD)/onnxsurgeon $(PY) -m pytest -q -p no:cacheprovider tests/python/test_bad_inputs.py
	@for t in $(FUZZ_TARGETS); do \
	  echo "seed corpus: $$t"; \
	  $(ASAN_BUILD)/fuzz/$$t -runs=0 -rss_limit_mb=4096 $(ASAN_BUILD)/fuzz/seeds/$$t > $(ASAN_BUILD)/fuzz/$$t-seeds.log 2>&1 \
	    || { tail -40 $(ASAN_BUILD)/fuzz/$$t-seeds.log; echo "seed corpus: $$t failed"; exit 1; }; \
	  tail -1 $(ASAN_BUILD)/fuzz/$$t-seeds.log; \
	done

# Each target for FUZZ_SECONDS on its seed corpus; findings go to build-asan/fuzz/findings.
fuzz: fuzz-seeds
	@mkdir -p $(ASAN_BUILD)/fuzz/corpus $(ASAN_BUILD)/fuzz/findings
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(ASAN_BUILD)/fuzz/corpus/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(ASAN_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 -max_len=262144 \
	    -print_final_stats=1 -artifact_prefix=$(ASAN_BUILD)/fuzz/findings/$$t- \
	    $(ASAN_BUILD)/fuzz/corpus/$$t $(ASAN_BUILD)/fuzz/seeds/$$t 2>&1 | tee $(ASAN_BUILD)/fuzz/$$t.log | \
	    grep -E "^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY)" ; \
	  [ $${PIPESTATUS[0]} -eq 0 ] || { echo "fuzz: $$t found a crash, see $(ASAN_BUILD)/fuzz/$$t.log"; exit 1; }; \
	done

# Style (scripts/lint.sh): `make lint` checks the tracked C++ with clang-format 16
# (.clang-format) and the Python with ruff (pyproject.toml); `make format` rewrites them.
lint: bootstrap
	@bash scripts/lint.sh

format: bootstrap
	@bash scripts/lint.sh --fix

clean:
	rm -rf $(BUILD)
