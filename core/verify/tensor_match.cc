#include "core/verify/tensor_match.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/shape.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon {
namespace {

// The values `compare` can expose: main-graph node outputs, except Constant nodes'.
bool Comparable(const Value* v) {
  return v && v->producer() && !v->producer()->Is("Constant") && v->graph()->kind() == GraphKind::kMain;
}

// True when nothing known about the two values' types tells them apart: element types and
// static dims agree wherever both are known.
bool TypesMayAgree(const Value* a, const Value* b) {
  const int32_t ta = ElementType(a), tb = ElementType(b);
  if (ta && tb && ta != tb) return false;
  const auto sa = ShapeOf(a), sb = ShapeOf(b);
  if (!sa || !sb) return true;
  if (sa->size() != sb->size()) return false;
  for (size_t i = 0; i < sa->size(); ++i)
    if ((*sa)[i].is_static() && (*sb)[i].is_static() && (*sa)[i].value != (*sb)[i].value) return false;
  return true;
}

}  // namespace

std::string RuleOf(const Node& node) {
  for (const auto& meta : node.proto().metadata_props())
    if (meta.key() == kProvenanceKey) return meta.value();
  return "";
}

std::vector<TensorPair> MatchTensors(const Model& a, const Model& b) {
  const Graph& ga = a.graph();
  const Graph& gb = b.graph();
  absl::flat_hash_map<const Value*, int64_t> position;
  int64_t index = 0;
  for (Node* n : ga.nodes()) {
    for (Value* v : n->outputs())
      if (v) position[v] = index;
    ++index;
  }
  absl::flat_hash_set<const Value*> paired_a, paired_b;
  std::vector<std::pair<Value*, Value*>> found;
  std::vector<std::string> how;
  auto pair = [&](Value* va, Value* vb, const char* why) {
    if (!Comparable(va) || !Comparable(vb) || paired_a.contains(va) || paired_b.contains(vb)) return;
    paired_a.insert(va);
    paired_b.insert(vb);
    found.emplace_back(va, vb);
    how.push_back(why);
  };
  for (Value* va : ga.outputs())
    for (Value* vb : gb.outputs())
      if (va->name() == vb->name()) pair(va, vb, "output");
  for (Node* n : ga.nodes()) {
    for (Value* va : n->outputs()) {
      if (!va) continue;
      if (Value* vb = gb.FindValue(va->name())) pair(va, vb, "name");
    }
  }
  for (Node* n : gb.nodes()) {
    for (const auto& [i, origin] : ReplacedValues(*n)) {
      if (i < 0 || static_cast<size_t>(i) >= n->num_outputs()) continue;
      if (Value* va = ga.FindValue(origin)) pair(va, n->output(i), "provenance");
    }
  }
  // 4. At the boundary of a changed region: a node both models hold (same name, op and
  // arity) reads, at one input, the value the region hands on in each; whatever the
  // region was rewritten into and renamed, that value is the same tensor.
  absl::flat_hash_map<std::string_view, const Node*> a_nodes;
  for (const Node* n : ga.nodes())
    if (!n->name().empty()) a_nodes.emplace(n->name(), n);
  for (Node* nb : gb.nodes()) {
    auto it = nb->name().empty() ? a_nodes.end() : a_nodes.find(nb->name());
    if (it == a_nodes.end()) continue;
    const Node* na = it->second;
    if (na->op_type() != nb->op_type() || na->domain() != nb->domain() || na->num_inputs() != nb->num_inputs())
      continue;
    for (size_t i = 0; i < na->num_inputs(); ++i) {
      Value* va = na->input(i);
      Value* vb = nb->input(i);
      if (va && vb && va->name() != vb->name() && TypesMayAgree(va, vb)) pair(va, vb, "boundary");
    }
  }
  std::vector<TensorPair> pairs;
  for (size_t k = 0; k < found.size(); ++k) {
    auto [va, vb] = found[k];
    TensorPair p;
    p.a = va->name();
    p.b = vb->name();
    p.how = how[k];
    p.position = position[va];
    p.a_node = va->producer()->name();
    p.a_op = va->producer()->op_type();
    p.b_node = vb->producer()->name();
    p.b_op = vb->producer()->op_type();
    p.b_rule = RuleOf(*vb->producer());
    pairs.push_back(std::move(p));
  }
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const TensorPair& x, const TensorPair& y) { return x.position < y.position; });
  return pairs;
}

}  // namespace onnxsurgeon
