// compute-in-float32: runs the listed ops, where they compute in float16 or bfloat16, in
// float32: each float16 input is cast up, the op runs in float32, its output is cast back
// (for runtimes whose float16 kernel of the op is missing or broken: onnxruntime 1.14.1's
// float16 HardSigmoid crashes the process, measured here, targets/probes/fp16_ops.py).
//
// Exact to the op's float16 definition computed as runtimes compute it: every float16
// value is exact in float32, so the op sees the same inputs, computes in float32 and its
// result is rounded to float16 once (onnxruntime's float16 kernels widen the same way; a
// kernel computing in float16 throughout may differ by float16 rounding of intermediates).
// Ops with one output whose first input is float16 or bfloat16; integer inputs (axes,
// indices) pass unchanged, float inputs of another type are refused with the reason.
//
// Options: ops (op types, separated by ';'; required).
//
// Before:  y = HardSigmoid<alpha=0.2>(x)                     x, y: float16
// After:   y = Cast<to=FLOAT16>(HardSigmoid<alpha=0.2>(Cast<to=FLOAT>(x)))
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

bool Narrow(int32_t type) { return type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16; }

class ComputeInFloat32Pass : public PatternPass {
 public:
  explicit ComputeInFloat32Pass(std::vector<std::string> ops) : ops_(std::move(ops)) {
    for (const std::string& op : ops_) {
      pattern::Pattern p(op);
      pattern::ValueRef x = p.Where(
          p.Any("x"),
          [](const Value* v, std::string* why) {
            if (Narrow(ElementType(v))) return true;
            if (why) *why = "its first input is not float16 or bfloat16";
            return false;
          },
          "float16 or bfloat16");
      pattern::OpRef n = p.Op(op, {x}, 1).AnyNumberOfInputs().Capture("n");
      // The plan: the output's element type (to cast back to).
      AddRule(std::make_unique<PatternRule<int32_t>>(
          absl::StrCat("float32-", op), std::move(p), n.id(),
          [](const pattern::Match& m) -> Verdict<int32_t> {
            const Node* node = m.node("n");
            for (const Value* v : node->inputs()) {
              int32_t t = v ? ElementType(v) : 0;
              if (lowering::IsFloatType(t) && !Narrow(t) && t != kFloat)
                return Refuse(absl::StrCat("input '", v->name(), "' is a float type other than float16/32"));
            }
            int32_t out = ElementType(node->output(0));
            if (!Narrow(out)) return Refuse("its output's element type is not float16 or bfloat16 (or unknown)");
            return out;
          },
          [](const pattern::Match& m, int32_t out, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
            const Node* node = m.node("n");
            std::vector<Value*> inputs;
            for (Value* v : node->inputs())
              inputs.push_back(v && Narrow(ElementType(v)) ? rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kFloat)}) : v);
            std::vector<onnx::AttributeProto> attributes;
            for (const Attribute& a : node->attributes()) attributes.push_back(a.proto());
            Value* wide = rw.Op(node->op_type(), std::move(inputs), std::move(attributes));
            return std::vector<Value*>{rw.Op("Cast", {wide}, {Rewriter::AttrInt("to", out)})};
          }));
    }
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    if (ops_.empty()) return PassResult{};  // no ops= given: nothing to widen (as set-input-shape)
    // Infer when a listed op's input or output type is unknown (a model without value_info:
    // the plan's check reads inferred types, so must the rewrite).
    auto needs = [this](const Model& m) {
      for (Node* n : m.graph().AllNodesRecursive())
        if (n->domain().empty() && n->num_outputs() && n->num_inputs() && n->input(0) &&
            std::find(ops_.begin(), ops_.end(), n->op_type()) != ops_.end() &&
            (ElementType(n->input(0)) == 0 || ElementType(n->output(0)) == 0))
          return true;
      return false;
    };
    TypeRequest request;  // recorded in value_info, as lowering's inference
    request.infer.data_propagation = false;
    request.infer.max_payload_bytes = -1;
    (void)TypeFacts::Ensure(model, needs, request);
    return PatternPass::Run(model, context);
  }

 private:
  std::vector<std::string> ops_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateComputeInFloat32Pass(const PassOptions& o) {
  return std::make_unique<ComputeInFloat32Pass>(o.List("ops"));
}

}  // namespace onnxsurgeon::passes
