#include "passes/targeting/conditions/common.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/domains.h"
#include "core/ir/graph.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon::target {

bool IsConstant(const Value* v) {
  if (!v) return false;
  if (v->IsInitializer() && !v->IsGraphInput()) return true;
  return v->producer() && v->producer()->Is("Constant");
}

std::string ShapeText(const Value& v) {
  if (!v.type() || !v.type()->has_tensor_type() || !v.type()->tensor_type().has_shape()) return "unknown shape";
  std::vector<std::string> dims;
  for (const auto& d : v.type()->tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

std::string NodeName(const Node& n) {
  return n.name().empty() ? absl::StrCat("<unnamed ", n.op_type(), ">") : n.name();
}

bool AnyTensor(const Node& n, const std::function<bool(const Value&)>& f) {
  for (const Value* v : n.inputs())
    if (v && v->type() && v->type()->has_tensor_type() && f(*v)) return true;
  for (const Value* v : n.outputs())
    if (v && v->type() && v->type()->has_tensor_type() && f(*v)) return true;
  return false;
}

StatusOr<int64_t> ParseIndex(absl::string_view text, absl::string_view condition) {
  int64_t i = -1;
  if (!absl::SimpleAtoi(text, &i) || i < 0)
    return absl::InvalidArgumentError(absl::StrCat("'", condition, "': '", text, "' is not a non-negative integer"));
  return i;
}

Status NeedArgument(absl::string_view arguments, absl::string_view condition) {
  if (arguments.empty()) return absl::InvalidArgumentError(absl::StrCat("'", condition, "' needs an argument"));
  return absl::OkStatus();
}

int64_t OpsetBeforeForm(const Node& n) {
  const auto* schema = onnx::OpSchemaRegistry::Schema(
      n.op_type(), static_cast<int>(n.graph()->OpsetVersion(n.domain())), std::string(CanonicalDomain(n.domain())));
  return schema ? schema->SinceVersion() - 1 : -1;
}

std::optional<Shape> RemedyShape(const Value* v, const RemedyContext& context) {
  std::optional<Shape> shape = context.types.DimsOf(v);
  if (shape && context.static_inputs && !StaticDims(shape)) return std::nullopt;
  return shape;
}

namespace {

// `known` remembers each value's answer, so a value many paths reach is walked once.
bool ShapeDerivedFrom(const Value* v, absl::flat_hash_map<const Value*, bool>& known, int depth) {
  if (!v || IsConstant(v)) return v != nullptr;
  if (auto it = known.find(v); it != known.end()) return it->second;
  const Node* p = v->producer();
  bool derived = p && depth <= 64 && p->subgraphs().empty();
  if (derived && !p->Is("Shape") && !p->Is("Size")) {
    for (const Value* in : p->inputs())
      if (in && !ShapeDerivedFrom(in, known, depth + 1)) {
        derived = false;
        break;
      }
  }
  known[v] = derived;
  return derived;
}

}  // namespace

bool ShapeDerived(const Value* v) {
  absl::flat_hash_map<const Value*, bool> known;
  return ShapeDerivedFrom(v, known, 0);
}

}  // namespace onnxsurgeon::target
