// `onnxsurgeon compare A B`: where do two models part? Both run on the same inputs with
// their intermediate tensors exposed (in segments, core/verify/segments.h, so memory stays
// bounded), tensors are paired across the rewrite (core/verify/tensor_match.h), and every
// pair is judged with the tolerance table --check uses (python/onnxsurgeon/tolerance.py):
// max abs and max rel error, and the share of elements outside tolerance. The first pair,
// in A's topological order, outside tolerance on a path of such pairs to an output outside
// tolerance is the first divergence, named with the node that made it.
//
// B can also be A run in another runtime (--backend: a backend venv's onnxruntime or
// OpenVINO, exposing tensors as onnxruntime does; nncase, TFLite or rknn2, which run
// whole models only, on models cut at candidate tensors found by binary search), or
// arrays computed elsewhere (--reference FILE.npz: PyTorch, JAX outputs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/verify/tensor_match.h"

namespace onnxsurgeon {

struct CompareOptions {
  std::string inputs_file;                                   // --inputs FILE.npz, keyed by input name; empty: random
  std::map<std::string, std::vector<int64_t>> input_shapes;  // -1: the model's dim
  int64_t default_dim = 2;                                   // for symbolic dims the shapes above do not fix
  uint64_t seed = 0;
  std::string reference_file;  // --reference FILE.npz: B is these arrays, keyed by tensor name
  std::string backend;         // --backend NAME: B is A run in that backend
  int64_t batch = 64;          // exposed tensors per segment (memory bound)
  bool outputs_only = false;   // compare the graph outputs only
  // Widened by approximating passes (ApproximationTolerance, numeric_check.h).
  double extra_atol = 0, extra_rtol = 0;
  bool fp16_tolerance = false;
  std::string save_inputs;  // write the inputs used to this .npz (bisect reuses them)
};

struct TensorComparison {
  TensorPair pair;
  bool computed = true;  // false: a side did not compute it (missing says which)
  std::string missing;
  std::string dtype, b_dtype;
  std::vector<int64_t> shape;
  double max_abs = 0, max_rel = 0, atol = 0, rtol = 0, share_off = 0;
  double ratio = 0;  // worst |a - b| / (atol + rtol * |b|): over 1 is off
  int64_t off = 0, size = 0;
  std::string problem;  // "" when within tolerance
  bool ok() const { return !computed || problem.empty(); }
};

struct CompareResult {
  std::string a_label, b_label;  // what ran: file names, "onnxruntime 1.x", "openvino ..."
  std::string runtime, b_runtime, python;
  std::vector<std::string> defaulted_dims;
  std::vector<TensorComparison> rows;  // A's topological order
  // The first tensor, in A's order, on a path of tensors off tolerance that reaches an
  // output off tolerance (index into rows; -1: the outputs agree). Tensors off before it,
  // or anywhere when the outputs agree, that no such path reaches are `drift`: a rewrite
  // changed them on purpose and later tensors match again.
  int64_t first_divergence = -1;
  int64_t drift = 0;
  int64_t segments_a = 0, segments_b = 0;
  int64_t not_exposed = 0;  // pairs a side could not expose (no type onnx infers)
  std::vector<std::string> tolerance_notes;
  std::vector<std::string> notes;  // e.g. cuts a backend refused
  bool ok() const { return first_divergence < 0; }
};

// Given two loaded models (their main graphs may be sorted topologically; nothing else
// changes) and options. Execute cuts both into segments in a temporary folder and runs the
// compare helper (or, with options.backend, A twice: in onnxruntime and in the backend's
// venv; with options.reference_file, A against the arrays). `b` is ignored with a backend
// or a reference. Result the comparison; an error when a model cannot be cut, a runtime
// refuses a model, or no Python with onnxruntime is found.
StatusOr<CompareResult> CompareModels(Model& a, Model* b, const CompareOptions& options);

// The backends compare can run A in: "ort-1.10", "ort-1.14", "ort-1.15" and "openvino"
// expose intermediate tensors; "nncase-k210", "tflite" and "rknn2" run whole models only,
// and are compared by cutting A at candidate tensors (compare_by_cuts.cc).
std::vector<std::string> CompareBackends();

Json CompareToJson(const CompareResult& result);
// The text report: the first divergence, then up to max_rows rows around and after it.
std::string FormatCompareText(const CompareResult& result, size_t max_rows);

}  // namespace onnxsurgeon
