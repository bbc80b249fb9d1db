// Target profiles: what one runtime or compiler accepts, as data (targets/*.toml).
//
// Every fact carries its source (a doc page or release note with its version, or
// "measured here with <backend> <version>: <error>"), so `check --target` can say why a
// node blocks and where that rule comes from. The profiles under targets/ are compiled
// into the binary (core/profile/CMakeLists: the TOML text, parsed with toml++ at first
// use); `--target path/to/file.toml` loads a user's own profile with the same parser.
// docs/targets.md describes the format and how to add a profile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/status.h"

namespace onnxsurgeon::target {

// A fact and where it comes from.
struct Source {
  std::string text;  // never empty in a valid profile
};

// Ops the target lacks, in every form or in one form (`when`). The `when` vocabulary is the
// condition registry's (passes/targeting/conditions/conditions.def; `onnxsurgeon targets
// --conditions` lists it); passes/targeting/compiled_profile.h compiles it when a profile loads.
// ops = ["*"] matches every op of the domain (with a `when`: a dtype the target cannot compute).
struct MissingOp {
  std::vector<std::string> ops;
  std::string domain;  // "" = ai.onnx
  std::string when;
  std::string source;
  // The plan step that removes what the fact finds (a PLAN_STEP of passes/passes.def, or
  // "none"); empty: the condition's default, else the step that removes the node's op.
  std::string remedy;
};

enum class Form { kOp, kDecomposed };  // LayerNorm and GELU: the fused op, or standard ops
enum class ScatterReduction { kNative, kLower, kUnsupported };
enum class IfRule { kAny, kConstantCondition, kNone };

struct Profile {
  std::string name;      // as in `--target NAME`
  std::string title;     // one line
  std::string versions;  // the versions the facts hold for
  std::string notes;     // free text shown by `onnxsurgeon targets --verbose` and docs

  int64_t opset_min = 7, opset_max = 0;
  std::string opset_source;
  int64_t ml_opset_max = -1;  // -1: no ai.onnx.ml limit stated
  std::string ml_source;
  int64_t ir_max = -1;  // -1: no limit stated
  std::string ir_source;

  Form layernorm = Form::kOp;
  std::string layernorm_source;
  Form gelu = Form::kOp;
  std::string gelu_source;
  bool erf = true;
  std::string erf_source;
  ScatterReduction scatternd_reduction = ScatterReduction::kNative;
  std::string scatternd_source;

  IfRule if_rule = IfRule::kAny;
  bool loop = true;  // Loop and Scan
  std::string control_flow_source;

  // [plan] simplify_first: run simplify before the planned steps whenever something blocks
  // (what `--target NAME --search` measured winning on the backend).
  bool simplify_first = false;
  std::string plan_source;

  bool static_shapes = false;
  // The largest static dim 0 a graph input may have (0: any). ncnn's Mat has no batch
  // dimension, so its converter drops dim 0 and runs one item.
  int64_t max_batch = 0;
  std::string shapes_source;
  std::string int64 = "full";  // full | cast-to-int32 | shape-only: informational
  std::string int64_source;
  bool external_data = true;
  std::string external_data_source;
  bool value_info_everywhere = false;
  std::string value_info_source;
  // Classical ML: ai.onnx.ml operators, string tensors, sequence and map values (ZipMap's
  // seq(map(int64, float)) output). Every profile states them ([ml]).
  // [quantization] qdq: what the runtime does with a QDQ model's QuantizeLinear ->
  // DequantizeLinear pairs: "consume" (computes in int8 from the model's scales), "dequantize"
  // (runs them in float), "refuse"; "" when the profile does not state it. Default pipelines
  // keep Q/DQ pairs; for "refuse" the compiled profile (passes/targeting/compiled_profile.cc)
  // adds a fact that QuantizeLinear/DequantizeLinear are missing, which the plan step
  // fold-qdq removes where they are on constants.
  std::string qdq;
  std::string qdq_source;
  // [quantization] block_weights: how the plan lowers block-quantized contrib ops
  // (MatMulNBits, GatherBlockQuantized) where the blocked DequantizeLinear form exists
  // (opset 21): "keep" their int4 weights (default) or write "float" ones, for a runtime
  // that computes compressed weights only approximately (OpenVINO's CPU plugin).
  bool float_block_weights = false;
  // Without [ml] nothing is claimed (all true, nothing refused).
  bool ml_stated = false;
  bool ml_ops = true;
  bool strings = true;
  bool sequences = true;
  std::string ml_types_source;
  bool custom_domains = false;
  // The custom domains the runtime itself registers (onnxruntime: com.microsoft). With
  // custom_domains, an op of any other custom domain (a user's custom:Custom_LayerNorm)
  // still blocks: no runtime knows it without the user's own kernel library.
  std::vector<std::string> known_domains;
  // The onnxruntime contrib ops (com.microsoft, and SimplifiedLayerNormalization in the
  // default domain) a runtime without com.microsoft among known_domains still converts
  // (OpenVINO's ONNX frontend: per op, targets/probes/contrib_ops.py). Empty: none, or
  // every op of a known com.microsoft domain but those its [[missing]] facts name.
  std::vector<std::string> contrib_ops;
  bool local_functions = false;
  std::string custom_source;

  // Graph outputs the runtime keeps: a copy (Identity, or a chain of them) of another graph
  // output, and a constant output (an initializer or a Constant's value), are dropped by
  // some converters without an error.
  bool output_copies = true;        // a graph output that is an Identity copy of another one
  bool output_input_copies = true;  // a graph output that is an Identity copy of a graph input
  bool output_constants = true;
  std::string outputs_source;

  std::vector<MissingOp> missing;
  std::string origin;  // "built-in" or the file it was read from
};

// Given TOML text (and where it came from, for messages). Execute parses and validates
// it: every key known, every fact sourced. Result the profile, or an error naming the
// key and the file. (Its `when` and `remedy` texts are checked where they are compiled:
// passes/targeting/compiled_profile.h's ParseTarget and LoadTarget.)
StatusOr<Profile> ParseProfile(const std::string& toml_text, const std::string& origin);

// The built-in profiles (targets/*.toml), in name order.
const std::vector<Profile>& BuiltinProfiles();

// Given a name (a built-in profile) or a path ending in .toml. Result the profile, or
// an error listing the known names.
StatusOr<Profile> LoadProfile(const std::string& name_or_path);

std::string FormName(Form f);
std::string ScatterReductionName(ScatterReduction r);

}  // namespace onnxsurgeon::target
