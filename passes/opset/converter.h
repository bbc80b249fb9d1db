// The opset converter: rewrites every node of the default domain (and ai.onnx.ml) to the
// signature its op has at a target opset, up or down, and sets the opset imports.
//
// How a node is converted (passes/opset/converter.cc):
//   1. Its op's versions are read from onnx's schema registry: the schema in force at the
//      node's current opset (since_version a) and at the target (since_version b).
//   2. If the op does not exist at the target (or must not be used there, see
//      decompose.cc), the node is decomposed into older ops: the shared emitters
//      (LayerNormalization, Gelu) or the op's own function body from the schema; the new
//      nodes are converted in turn.
//   3. Else the driver walks the op's versions from a to b one step at a time. Each step
//      first runs the step's adapter, if the table (adapters.cc) has one: the semantics
//      moved in a way the schemas do not show (Softmax's axis, Split's num_outputs,
//      value sets of string attributes...). Then the generic step derived from the two
//      schemas runs: inputs and attributes are matched by name, an attribute that became
//      an input turns into a constant, a constant input that became an attribute turns
//      into one (a non-constant one is refused), attributes and optional inputs the
//      other version lacks must be absent or at their default, and a default that
//      changed is written explicitly. Steps that only widened type lists are no-ops.
//   4. At the end every converted node's actual types (from onnx shape inference) must be
//      allowed by the target schema: bfloat16, float8, int4... are refused where the
//      target lacks them.
// Nothing is guessed: a step that cannot be done exactly stops with an error naming the
// node, the op, the versions and why.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon::opset {

enum class Direction { kAny, kDownOnly, kUpOnly };

struct ConvertOptions {
  int64_t target = -1;     // default-domain opset to reach
  int64_t ml_target = -1;  // ai.onnx.ml opset to reach (-1: leave the ml domain alone)
  Direction direction = Direction::kAny;
  // Convert what can be converted: when some node cannot reach `target`, the model goes to
  // the lowest (highest, upwards) opset every node can reach instead, and the blockers
  // are reported. A model never claims an opset one of its nodes is not defined at.
  bool allow_partial = false;
};

// One node that cannot be converted, and why.
struct Blocker {
  std::string node;   // node name (or "<op> #k" when unnamed)
  std::string op;     // domain-qualified op type
  std::string where;  // "main graph", "function local::F", "subgraph of node 'x'"
  int64_t from = -1;  // opset the node was at
  int64_t to = -1;    // opset it was to go to
  std::string why;
  std::string Describe() const;
};

struct ConvertReport {
  int64_t source = -1;                    // default-domain opset before
  int64_t target = -1;                    // requested
  int64_t reached = -1;                   // what the model claims now (== target unless allow_partial)
  std::map<std::string, int64_t> counts;  // what was done: "adapter:Softmax-13-11", "decomposed:Gelu", ...
  std::vector<Blocker> blockers;
};

// Given a model and options. Execute converts it in place. Result the report; an error
// (the model unchanged) naming the first blocker unless allow_partial.
StatusOr<ConvertReport> ConvertOpset(Model& model, const ConvertOptions& options);

// Given a model and a target. Execute converts a copy. Result every blocker (an empty
// list: the conversion would succeed); the model is untouched.
StatusOr<ConvertReport> CheckOpsetConversion(const Model& model, int64_t target, int64_t ml_target = -1);

// The newest opset of `domain` the linked onnx library knows.
int64_t LatestOpset(const std::string& domain = "");

}  // namespace onnxsurgeon::opset
