// Custom-domain ops named like a LayerNorm (Custom_LayerNorm, LayerNormPlugin, ...) become
// LayerNormalization: the op the fix-layernorm pass is named after.
#include "passes/layernorm/fusion_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/domains.h"
#include "core/ir/shape.h"
#include "core/rewrite/facts.h"
#include "core/shape/symbolic.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"
#include "passes/reductions/mean.h"

namespace onnxsurgeon::layernorm {
namespace fusion {
namespace {

using lowering::Rank;

// ---- custom ops named like a LayerNorm -----------------------------------------------

class CustomNamedLayerNormRule : public NodeRule<Plan> {
 public:
  CustomNamedLayerNormRule(std::vector<std::string> names, DecomposeWhen decompose)
      : NodeRule("layernorm-custom-op", /*root_op=*/"", "", /*benefit=*/4),
        names_(std::move(names)),
        decompose_(std::move(decompose)) {}

 protected:
  Verdict<Plan> Check(Node* node, RewriteFacts&) const override {
    if (!IsCustomNamedLayerNorm(*node, names_)) return Refuse("");
    Model* model = node->graph()->model();
    if (model && model->FindFunction(node->domain(), node->op_type(), node->proto().overload())) {
      return Refuse("calls a model-local function: judged by its body, not its name");
    }
    size_t n_inputs = node->num_inputs();
    while (n_inputs > 0 && !node->input(n_inputs - 1)) --n_inputs;
    if (n_inputs < 1 || n_inputs > 3 || !node->input(0) || (n_inputs == 3 && !node->input(1))) {
      return Refuse(absl::StrCat("has ", n_inputs, " inputs; wants x[, scale[, bias]]"));
    }
    for (size_t i = 1; i < node->num_outputs(); ++i) {
      if (node->output(i) && node->output(i)->HasUsers()) {
        return Refuse(absl::StrCat("its output ", i, " is used; only the normalized output is understood"));
      }
    }
    Plan plan;
    plan.x = node->input(0);
    plan.elem_type = ElementType(plan.x);
    if (plan.elem_type == onnx::TensorProto::DOUBLE) return Refuse("x is double; LayerNormalization computes in float");
    if (plan.elem_type != 0 && !IsLayerNormType(plan.elem_type)) return Refuse("x is not a floating-point tensor");
    std::string why;
    if (!ReadEpsilon(*node, &plan.epsilon, &why) || !ReadAxis(*node, Rank(plan.x), &plan.axis, &why)) {
      return Refuse(std::move(why));
    }
    plan.scale = n_inputs >= 2 ? node->input(1) : nullptr;
    plan.bias = n_inputs >= 3 ? node->input(2) : nullptr;
    if (plan.elem_type == 0 && plan.scale) plan.elem_type = ElementType(plan.scale);  // scale has x's type
    if (!plan.scale && plan.elem_type == 0) return Refuse("no scale input and x's element type is unknown");
    plan.decompose = decompose_ && decompose_(*node);
    return plan;
  }

  Status Replace(Node* node, Plan plan, Rewriter& rw) const override {
    OS_ASSIGN_OR_RETURN(Value * y, EmitLayerNorm(rw, plan));
    std::vector<Value*> replacements(node->num_outputs(), nullptr);
    replacements[0] = y;
    return rw.ReplaceNode(node, replacements);
  }

 private:
  static bool ReadEpsilon(const Node& n, float* eps, std::string* why) {
    for (const char* name : {"epsilon", "eps"}) {
      if (const Attribute* a = n.FindAttribute(name)) {
        if (a->type() == onnx::AttributeProto::FLOAT) *eps = a->f();
        else if (a->type() == onnx::AttributeProto::INT) *eps = static_cast<float>(a->i());
        else return Refuse(why, absl::StrCat("attribute '", name, "' is not a number"));
        return true;
      }
    }
    return true;  // LayerNormalization's default, 1e-5
  }
  static bool ReadAxis(const Node& n, int64_t rank, int64_t* axis, std::string* why) {
    for (const char* name : {"axis", "begin_norm_axis"}) {
      if (const Attribute* a = n.FindAttribute(name)) {
        *axis = a->i(-1);
        return true;
      }
    }
    if (const Attribute* a = n.FindAttribute("axes")) {
      Reduction r;
      r.axes = a->ints();
      r.all = r.axes.empty();
      auto first = TrailingAxis(r, rank, why);
      if (!first) return false;
      *axis = *first;
    }
    return true;
  }

  std::vector<std::string> names_;
  DecomposeWhen decompose_;
};

}  // namespace

std::unique_ptr<RewriteRule> MakeCustomNamedRule(std::vector<std::string> names, DecomposeWhen decompose) {
  return std::make_unique<CustomNamedLayerNormRule>(std::move(names), std::move(decompose));
}

}  // namespace fusion

bool IsCustomNamedLayerNorm(const Node& n, const std::vector<std::string>& names) {
  if (IsStandardDomain(n.domain())) return false;
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& name) { return absl::EqualsIgnoreCase(n.op_type(), name); });
}

const std::vector<std::string>& DefaultCustomNames() {
  static const std::vector<std::string> names = {
      "Custom_LayerNorm",   "CustomLayerNorm", "CustomLayerNormalization", "LayerNorm",
      "LayerNormalization", "LayerNormPlugin", "LayerNormalizationPlugin", "layer_norm",
  };
  return names;
}

}  // namespace onnxsurgeon::layernorm
