#include "core/shape/op_table.h"

#include <algorithm>

namespace onnxsurgeon::shape_ops {

Out ShapeInput::One(std::optional<TensorType> t) const {
  Out out(node.num_outputs());
  if (t && t->elem == 0) t.reset();  // e.g. a Cast without `to`
  if (!out.empty()) out[0] = std::move(t);
  return out;
}

Out ShapeInput::Typed(int32_t elem, std::optional<Shape> s) const {
  return One(s ? std::optional<TensorType>(TensorType{elem, std::move(*s)}) : std::nullopt);
}

OpRules& OpTable::Slot(std::string_view op) {
  auto [it, added] = slots_.try_emplace(op, rules_.size());
  if (added) rules_.emplace_back(op, OpRules{});
  return rules_[it->second].second;
}

void OpTable::Shape(std::initializer_list<std::string_view> ops, ShapeRule rule, bool reads_no_inputs) {
  for (std::string_view op : ops) {
    OpRules& r = Slot(op);
    r.shape = rule;
    r.shape_reads_no_inputs = reads_no_inputs;
  }
}

void OpTable::Symbolic(std::initializer_list<std::string_view> ops, SymbolicRule rule) {
  for (std::string_view op : ops) Slot(op).symbolic = rule;
}

void OpTable::Data(std::initializer_list<std::string_view> ops, DataRule rule) {
  for (std::string_view op : ops) Slot(op).data = rule;
}

void OpTable::Ints(std::initializer_list<std::string_view> ops, IntsRule rule) {
  for (std::string_view op : ops) Slot(op).ints = rule;
}

void OpTable::Computed(std::initializer_list<std::string_view> ops, ComputedShapeRule rule) {
  for (std::string_view op : ops) Slot(op).computed = rule;
}

void OpTable::Seal() {
  std::sort(rules_.begin(), rules_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  slots_.clear();  // indices are stale once sorted; Find searches the sorted list
}

const OpRules* OpTable::Find(std::string_view op_type) const {
  auto it = std::lower_bound(rules_.begin(), rules_.end(), op_type,
                             [](const auto& entry, std::string_view op) { return entry.first < op; });
  return it != rules_.end() && it->first == op_type ? &it->second : nullptr;
}

const OpTable& TheOpTable() {
  static const OpTable* table = [] {
    auto* t = new OpTable;  // never destroyed: rules run during static destruction too
    RegisterElementwise(*t);
    RegisterTensorOps(*t);
    RegisterLinalg(*t);
    RegisterReduce(*t);
    RegisterNn(*t);
    RegisterData(*t);
    t->Seal();
    return t;
  }();
  return *table;
}

const OpRules* FindOpRules(std::string_view op_type) { return TheOpTable().Find(op_type); }

}  // namespace onnxsurgeon::shape_ops
