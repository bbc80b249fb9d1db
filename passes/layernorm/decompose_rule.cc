#include "passes/layernorm/decompose_rule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"

namespace onnxsurgeon::layernorm {
namespace {

// True when `v` is a constant whose every element equals `x`, or ConstantOfShape(.., x).
bool IsFilledWith(const Value* v, double x) {
  if (!v) return false;
  std::optional<ConstantData> c = GetConstant(v);
  if (!c) {
    const Node* p = v->producer();
    if (!p || !p->Is("ConstantOfShape")) return false;
    const Attribute* value = p->FindAttribute("value");
    if (!value) return x == 0.0;  // the default fill is a float 0
    c = GetConstant(value->proto().t());
  }
  std::optional<std::vector<double>> values = c ? c->AsDoubles() : std::nullopt;
  return values && std::all_of(values->begin(), values->end(), [x](double e) { return e == x; });
}

// The plan: the decomposition's operands, read from the node.
class DecomposeLayerNormRule : public NodeRule<lowering::LayerNormSpec> {
 public:
  explicit DecomposeLayerNormRule(std::function<bool(const Node&)> applies)
      : NodeRule("decompose-layernorm", "LayerNormalization"), applies_(std::move(applies)) {}

 protected:
  Verdict<lowering::LayerNormSpec> Check(Node* node, RewriteFacts&) const override {
    if (!applies_(*node)) return Refuse("");
    if (node->num_inputs() < 2 || !node->input(0) || !node->input(1)) {
      return absl::InvalidArgumentError(absl::StrCat("LayerNormalization '", node->name(), "' lacks X or Scale"));
    }
    lowering::LayerNormSpec spec;
    spec.x = node->input(0);
    spec.scale = IsFilledWith(node->input(1), 1.0) ? nullptr : node->input(1);
    spec.bias = node->num_inputs() > 2 && !IsFilledWith(node->input(2), 0.0) ? node->input(2) : nullptr;
    if (const Attribute* a = node->FindAttribute("axis")) spec.axis = a->i(-1);
    if (const Attribute* a = node->FindAttribute("epsilon")) spec.epsilon = a->f(1e-5f);
    if (const Attribute* a = node->FindAttribute("stash_type")) spec.stash_type = static_cast<int32_t>(a->i(1));
    spec.elem_type = ElementType(spec.x);
    spec.rank = lowering::Rank(spec.x);
    return spec;
  }

  Status Replace(Node* node, lowering::LayerNormSpec spec, Rewriter& rw) const override {
    bool want_inv = node->num_outputs() > 2 && node->output(2) && node->output(2)->HasUsers();
    int64_t opset = node->graph()->OpsetVersion("");
    auto parts = lowering::EmitLayerNormDecomposition(rw, spec, opset, want_inv);
    if (!parts.ok()) {
      return Status(parts.status().code(), absl::StrCat("cannot decompose LayerNormalization '", node->name(),
                                                        "': ", parts.status().message()));
    }
    std::vector<Value*> replacements = {parts->y, parts->mean, parts->inv_std_dev};
    replacements.resize(node->num_outputs());
    return rw.ReplaceNode(node, replacements);
  }

 private:
  std::function<bool(const Node&)> applies_;
};

}  // namespace

std::unique_ptr<RewriteRule> MakeDecomposeRule(std::function<bool(const Node&)> applies) {
  return std::make_unique<DecomposeLayerNormRule>(std::move(applies));
}

}  // namespace onnxsurgeon::layernorm
