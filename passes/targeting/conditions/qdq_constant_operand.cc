// qdq-constant-operand: one input is a float constant quantized in the graph
// (QuantizeLinear -> DequantizeLinear of a constant or of a value computed from constants
// alone: a QAT bias or norm weight, a causal mask quantize_static quantized) and another is a DequantizeLinear output.
// OpenVINO 2026.4's low-precision transformations throw on such an Add or Mul (targets/probes/ov_qdq_binary.py); with
// the constant's pair folded to float (fold-qdq, exact) they run.
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

const Node* Dequantize(const Value* v) {
  const Node* p = v ? v->producer() : nullptr;
  return p && p->Is("DequantizeLinear") && p->num_inputs() > 0 ? p : nullptr;
}

// Whether `v` is computed from constants alone (no graph input reached): OpenVINO folds such
// a value (the causal mask Trilu(Constant, Constant)) before its quantization passes run.
bool DataIndependent(const Value* v, int& budget) {
  if (!v || IsConstant(v)) return v != nullptr;
  const Node* p = v->producer();
  if (!p || p->Is("Shape") || --budget <= 0) return false;
  for (const Value* in : p->inputs())
    if (in && !DataIndependent(in, budget)) return false;
  return true;
}

// The QuantizeLinear of a value computed from constants, read by a DequantizeLinear `v`
// makes; else null.
const Node* ConstantQuantize(const Value* v) {
  const Node* dq = Dequantize(v);
  const Node* q = dq && dq->input(0) ? dq->input(0)->producer() : nullptr;
  int budget = 64;  // nodes visited at most
  return q && q->Is("QuantizeLinear") && q->num_inputs() > 0 && DataIndependent(q->input(0), budget) ? q : nullptr;
}

class QdqConstantOperandCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    const Value* constant = nullptr;
    bool other = false;
    for (const Value* v : n.inputs()) {
      if (!constant && ConstantQuantize(v)) constant = v;
      else if (Dequantize(v)) other = true;
    }
    if (!constant || !other) return false;
    *detail = absl::StrCat("'", constant->name(),
                           "' is the QuantizeLinear -> DequantizeLinear of a value computed from constants, beside a "
                           "dequantized input");
    return true;
  }
  // fold-qdq folds the pairs on constants; one on a value computed from constants by an op
  // simplify does not fold (Trilu) stays.
  bool RemedyApplies(const Node& n, const RemedyContext&) const override {
    for (const Value* v : n.inputs())
      if (const Node* q = ConstantQuantize(v); q && !IsConstant(q->input(0))) return false;
    return true;
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext&) const override {
    for (const Value* v : n.inputs())
      if (const Node* q = ConstantQuantize(v); q && !IsConstant(q->input(0)))
        return absl::StrCat("the quantized value '", q->input(0)->name(), "' is computed from constants (",
                            q->input(0)->producer()->op_type(), "), which fold-qdq does not fold");
    return "";
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<QdqConstantOperandCondition>();
}

}  // namespace

extern const ConditionKind kQdqConstantOperand = {"qdq-constant-operand", "qdq-constant-operand",
                                                  "an input is the QuantizeLinear -> DequantizeLinear of a constant "
                                                  "(or of a value computed from constants alone) and another a "
                                                  "DequantizeLinear output",
                                                  "fold-qdq", Parse};

}  // namespace onnxsurgeon::target
