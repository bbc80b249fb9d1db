#include "core/shape/rules.h"

#include <algorithm>

#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/op_table.h"

namespace onnxsurgeon::shape_rules {

std::optional<Shape> ReshapeShape(const Shape& in, const std::vector<int64_t>& target, bool allowzero) {
  Shape out;
  std::vector<bool> unresolved_zero(target.size(), false);
  int64_t out_product = 1;
  std::optional<size_t> minus_one;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (minus_one) return std::nullopt;
      minus_one = i;
      out.push_back(Dim{});
    } else if (d == 0 && !allowzero) {
      if (i >= in.size()) return std::nullopt;
      out.push_back(in[i]);
      if (in[i].is_static()) out_product *= in[i].value;
      else unresolved_zero[i] = true;
    } else if (d >= 0) {
      out.push_back(Dim::Static(d));
      out_product *= d;
    } else {
      return std::nullopt;
    }
  }
  if (minus_one) {
    if (out_product == 0) return std::nullopt;
    int64_t in_product = 1;
    bool known = true;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].is_static()) in_product *= in[i].value;
      else if (i >= unresolved_zero.size() || !unresolved_zero[i]) known = false;
    }
    if (known) {
      if (in_product % out_product != 0) return std::nullopt;
      out[*minus_one] = Dim::Static(in_product / out_product);
    }
  }
  return out;
}

std::optional<Shape> Broadcast(const std::vector<const Shape*>& shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = 1;                  // the static size other than 1, if any
    std::vector<const Dim*> unknowns;  // dims that are not static
    for (const Shape* s : shapes) {
      if (i + s->size() < rank) continue;  // padded with 1
      const Dim& d = (*s)[i + s->size() - rank];
      if (!d.is_static()) {
        unknowns.push_back(&d);
      } else if (d.value != 1) {
        if (size != 1 && size != d.value) return std::nullopt;
        size = d.value;
      }
    }
    if (size != 1 || unknowns.empty()) {
      out[i] = Dim::Static(size);
    } else if (unknowns.size() == 1) {
      out[i] = *unknowns[0];  // a symbol, or unknown, against 1s
    } else {
      for (const Dim* d : unknowns)
        if (!d->is_symbolic() || d->symbol != unknowns[0]->symbol) return std::nullopt;
      out[i] = *unknowns[0];
    }
  }
  return out;
}

std::vector<std::optional<TensorType>> InferNode(const Node& n, TypeLookup type_of) {
  using Out = std::vector<std::optional<TensorType>>;
  // com.microsoft's QuantizeLinear/DequantizeLinear (16-bit before opset 21) are ai.onnx's.
  const bool contrib_qdq =
      n.domain() == "com.microsoft" && (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear");
  if ((!CanonicalDomain(n.domain()).empty() && !contrib_qdq) || n.num_outputs() == 0) return Out(n.num_outputs());
  const shape_ops::OpRules* rules = shape_ops::FindOpRules(n.op_type());
  if (!rules || !rules->shape) return Out(n.num_outputs());
  const int64_t opset = n.graph()->OpsetVersion("");
  std::vector<TensorType> ins;
  if (rules->shape_reads_no_inputs) return rules->shape({n, ins, type_of, opset});
  // Every present input must be known: rules read all of them.
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    if (!n.input(i)) {
      ins.push_back({});
      continue;
    }
    auto t = type_of(n.input(i));
    if (!t) return Out(n.num_outputs());
    ins.push_back(std::move(*t));
  }
  if (ins.empty() || !n.input(0)) return Out(n.num_outputs());
  return rules->shape({n, ins, type_of, opset});
}

}  // namespace onnxsurgeon::shape_rules
