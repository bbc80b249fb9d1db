// `onnxsurgeon inspect`: a health report answering "why does my runtime refuse this model?"
// ir_version, opsets, op histogram, interface types, initializers listed as inputs,
// custom-domain ops, local functions, external data, and ops with no schema at the
// model's opset.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/inspect/quantization.h"
#include "core/ir/model.h"

namespace onnxsurgeon {

struct InspectReport {
  struct Io {
    std::string name;
    std::string type;  // e.g. float[N,3,224,224]
  };
  struct ExternalFile {
    std::string location;
    int64_t tensors = 0;
    uint64_t bytes = 0;
  };
  struct Problem {
    std::string op;  // domain::op
    std::string why;
    int64_t count = 0;
  };

  int64_t ir_version = 0;
  std::string producer;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" = ai.onnx), version
  int64_t node_count = 0;                               // main graph
  int64_t total_node_count = 0;                         // with subgraphs and function bodies
  int64_t subgraph_count = 0;
  std::map<std::string, int64_t> op_histogram;  // main graph and subgraphs
  std::vector<Io> inputs, outputs;
  int64_t initializer_count = 0;
  uint64_t initializer_bytes = 0;
  std::vector<std::string> initializers_as_inputs;
  std::map<std::string, int64_t> custom_domain_ops;
  std::vector<std::string> functions;  // domain::name (nodes)
  std::vector<ExternalFile> external_data;
  std::vector<Problem> ops_without_schema;
  // Declarations (graph outputs, value_info) the computation contradicts: onnx's checker
  // rejects the model once its inference proves the real shape (after an opset upgrade,
  // say); `fix_pass` repairs them.
  struct ShapeConflict {
    std::string value;
    std::string where;  // "graph output" | "value_info"
    std::string declared, inferred;
  };
  std::vector<ShapeConflict> declared_shape_conflicts;
  // Q/DQ and QOperator nodes, quantized weight bytes (all zero for a float model).
  QuantizationStats quantization;
  static constexpr const char* kShapeConflictFix = "fix-declared-shapes";
};

// check_schemas=false skips custom_domain_ops, ops_without_schema (a schema lookup per
// node) and declared_shape_conflicts (shape inference), for callers that want only the
// counts (the CLI's run summary).
InspectReport Inspect(const Model& model, bool check_schemas = true);
std::string FormatInspectText(const InspectReport& report);
std::string FormatInspectJson(const InspectReport& report);

// "float[N,3]" style rendering of a value's type ("?" when unknown).
std::string TypeToString(const onnx::TypeProto* type);

}  // namespace onnxsurgeon
