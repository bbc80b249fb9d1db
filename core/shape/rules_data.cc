// Data propagation for the shape rules: the elements of small integer vectors (shape
// operands) as onnx's data propagation follows them, from constants and Shape.
#include <algorithm>
#include <string>

#include "core/eval/slicing.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/op_table.h"
#include "core/shape/rules_internal.h"

namespace onnxsurgeon::shape_rules {

bool Overridable(const Value* v) { return v && v->IsInitializer() && v->IsGraphInput(); }

std::optional<Shape> ShapeData(const Value* v, TypeLookup type_of, int depth) {
  if (!v || Overridable(v) || depth > 16) return std::nullopt;
  if (auto c = ConstantInt64s(v)) {
    Shape s;
    for (int64_t d : *c) s.push_back(Dim::Static(d));
    return s;
  }
  const Node* p = v->producer();
  if (!p || !CanonicalDomain(p->domain()).empty() || p->num_inputs() == 0) return std::nullopt;
  const shape_ops::OpRules* rules = shape_ops::FindOpRules(p->op_type());
  if (!rules || !rules->data) return std::nullopt;
  return rules->data({*p, type_of, depth});
}

std::optional<std::vector<int64_t>> IntData(const Value* v, TypeLookup type_of, int depth) {
  if (!v || Overridable(v) || depth > 16) return std::nullopt;
  if (auto c = ConstantInt64s(v)) return c;
  const Node* p = v->producer();
  if (p && CanonicalDomain(p->domain()).empty() && p->num_inputs() > 0)
    if (const shape_ops::OpRules* rules = shape_ops::FindOpRules(p->op_type()); rules && rules->ints)
      return rules->ints({*p, type_of, depth});
  return StaticDims(ShapeData(v, type_of, depth));
}

}  // namespace onnxsurgeon::shape_rules
