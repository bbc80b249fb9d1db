// --check: is the rewritten model numerically the original? Both run in onnxruntime on the
// same random inputs and every output is compared with a per-dtype tolerance.
//
// onnxruntime runs in a Python helper (ort_check.py, embedded in the binary) rather than
// through its C API: the PyPI wheel ships libonnxruntime but not its header, the Python API
// is stable across onnxruntime releases where the C ABI is versioned per release, and numpy
// does the comparison. The cost is one interpreter start (~0.3 s), small beside the runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/pass/pipeline.h"

namespace onnxsurgeon {

struct NumericCheckOptions {
  int runs = 3;
  uint64_t seed = 0;
  std::map<std::string, std::vector<int64_t>> input_shapes;  // -1: take the model's dim
  int64_t default_dim = 2;                                   // for symbolic dims the shapes above do not fix
  // Widened by approximating passes (ApproximationTolerance).
  double extra_atol = 0, extra_rtol = 0;
  bool fp16_tolerance = false;
};

struct OutputComparison {
  std::string name, type;
  std::vector<int64_t> shape;
  double max_abs = 0, max_rel = 0, atol = 0, rtol = 0;
  bool ok = true;
  std::string problem;
};

struct NumericCheckResult {
  bool ok = false;
  std::string runtime;  // "onnxruntime 1.x"
  std::string python;   // the interpreter that ran it
  int runs = 0;
  int64_t default_dim = 2;
  std::vector<std::string> defaulted_dims;  // input[axis] (symbol) given default_dim
  std::vector<OutputComparison> outputs;
  std::string error;                         // a model failed to load or run
  std::vector<std::string> tolerance_notes;  // why tolerances were widened
};

// The tolerances a pipeline's approximating passes need, from their measured bounds
// (docs/passes/gelu.md): rewrite-gelu(to=tanh) 5e-4, rewrite-gelu(to=sigmoid) 2.1e-2,
// rewrite-erf 5e-7, convert-float16 fp16 tolerance. Notes say which pass widened what.
void ApproximationTolerance(const std::vector<PipelineItem>& pipeline, NumericCheckOptions& options,
                            std::vector<std::string>& notes);

// Given the original model's file and the rewritten model. Execute saves the result to a
// temporary folder and runs both in onnxruntime. Result the comparison; an error when no
// Python with onnxruntime and numpy is found (saying what to install) or the helper fails.
// The interpreter: $ONNXSURGEON_PYTHON, else python3/python beside the onnxsurgeon binary
// (a venv's bin/), else python3 on PATH.
StatusOr<NumericCheckResult> RunNumericCheck(const std::string& original_path, const Model& result,
                                             const NumericCheckOptions& options);

std::string FormatNumericCheck(const NumericCheckResult& result);

}  // namespace onnxsurgeon
