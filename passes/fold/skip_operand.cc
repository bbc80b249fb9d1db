#include "passes/fold/skip_operand.h"

#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes {
namespace {

bool IsConstant(const Value* v) { return v->IsInitializer() || (v->producer() && v->producer()->Is("Constant")); }

// True when `sum` is what a LayerNormalization normalizes: read by one as its input 0, or
// by the ReduceMean and the Sub that start a decomposed one (onnxruntime fuses that into
// LayerNormalization first, then looks at its parent Add).
bool ReadByLayerNorm(const Value* sum) {
  bool mean = false, centered = false;
  for (const Use& u : sum->uses()) {
    if (u.node->Is("LayerNormalization") && u.input_index == 0) return true;
    mean |= u.node->Is("ReduceMean");
    centered |= u.node->Is("Sub") && u.input_index == 0;
  }
  return mean && centered;
}

// True when `symbol` names a dim of an input of `g` or of a graph enclosing it: a size the
// caller chooses, which onnxruntime's shape inference keeps symbolic too. Any other symbol
// is one onnx inference made up for a size it could not compute (unk__N), which
// onnxruntime's symbolic inference may well compute.
bool InputSymbol(const Graph* g, const std::string& symbol) {
  for (; g; g = g->parent_graph())
    for (const Value* in : g->inputs())
      if (std::optional<Shape> shape = ShapeOf(in))
        for (const Dim& d : *shape)
          if (d.is_symbolic() && SymbolDeclaredAs(symbol, d.symbol)) return true;
  return false;
}

// True when a constant of `skip` dims broadcasts as onnxruntime's SkipLayerNormalization
// takes a skip against an input `x` (fusion_skiplayernorm.py's _is_broadcast_skip, or the
// same shape). A dim inference could not compute (unknown, or a symbol of its own) does not
// refuse: extract-constants checks again once it is known. A graph input's symbol does
// (onnxruntime compares it with the skip's size and finds them different).
bool SkipShapeFits(const std::vector<int64_t>& skip, const Value* x) {
  if (skip.size() != 2 && skip.size() != 3) return false;
  std::optional<Shape> input = ShapeOf(x);
  if (!input) return skip.size() == 2 || skip[0] == 1;
  if (input->size() != 3) return false;
  auto fits = [&](const Dim& d, int64_t size) {
    if (d.is_static()) return d.value == size;
    return d.is_unknown() || !InputSymbol(x->graph(), d.symbol);
  };
  size_t k = skip.size() - 2;
  if (!fits((*input)[1], skip[k]) || !fits((*input)[2], skip[k + 1])) return false;
  return skip.size() == 2 || skip[0] == 1 || fits((*input)[0], skip[0]);
}

// True when onnxruntime fuses an Add whose other operand `lookup` is a Gather: its indices are
// a graph input (token ids) or a ConstantOfShape, and the skip needs no broadcast (the
// fusion leaves a broadcast Add of a lookup to EmbedLayerNormalization).
// While folding (`folding`), indices computed from anything not constant count as ids: what
// reshapes or casts the graph input may still go in a later step, and extract-constants
// checks again on the graph simplify leaves.
bool EmbeddingSkipFits(const std::vector<int64_t>& skip, const Value* lookup, bool folding) {
  const Node* gather = lookup->producer();
  const Value* indices = gather->num_inputs() == 2 ? gather->input(1) : nullptr;
  if (!indices) return false;
  bool ids = (indices->IsGraphInput() && !indices->graph()->parent_node()) || (folding && !IsConstant(indices));
  bool zeros = indices->producer() && indices->producer()->Is("ConstantOfShape");
  if (!ids && !zeros) return false;
  std::optional<std::vector<int64_t>> dims = StaticShapeOf(lookup);
  if (!dims) {  // not inferred yet: Gather's shape along axis 0 is the indices' and the table's rest
    const Attribute* axis = gather->FindAttribute("axis");
    std::optional<std::vector<int64_t>> table = StaticShapeOf(gather->input(0));
    dims = StaticShapeOf(indices);
    if ((axis && axis->i() != 0) || !table || table->empty() || !dims) return false;
    dims->insert(dims->end(), table->begin() + 1, table->end());
  }
  return *dims == skip;
}

bool SkipNormOperand(const Value* v, const std::vector<int64_t>& dims, bool folding) {
  if (v->IsGraphOutput()) return false;
  for (const Use& u : v->uses()) {
    const Node* add = u.node;
    if (!add->Is("Add") || add->num_inputs() != 2 || add->num_outputs() != 1 || !add->output(0)) continue;
    const Value* other = add->input(1 - u.input_index);
    if (!other || other == v || IsConstant(other)) continue;
    if (other->producer() && other->producer()->Is("Gather") && !EmbeddingSkipFits(dims, other, folding)) continue;
    if (!SkipShapeFits(dims, other)) continue;
    if (ReadByLayerNorm(add->output(0))) return true;
  }
  return false;
}

}  // namespace

bool IsSkipNormOperand(const Value* v) {
  std::optional<std::vector<int64_t>> dims = StaticShapeOf(v);
  return dims && SkipNormOperand(v, *dims, /*folding=*/false);
}

bool IsSkipNormOperand(const Value* v, const std::vector<int64_t>& dims) {
  return SkipNormOperand(v, dims, /*folding=*/true);
}

}  // namespace onnxsurgeon::passes
