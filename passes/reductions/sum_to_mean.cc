// sum-to-mean: ReduceSum(x) times 1/N, or over N, is ReduceMean(x) (see rules.h).
#include "absl/strings/str_cat.h"
#include "core/ir/shape.h"
#include "passes/reductions/mean.h"
#include "passes/reductions/rules_internal.h"

namespace onnxsurgeon::reductions {

using pattern::Match;
using pattern::OpRef;
using pattern::Pattern;

namespace {

// The plan: the ReduceSum's axes as written (empty: all).
using Axes = std::vector<int64_t>;

// ReduceMean over the ReduceSum's axes with its keepdims, axes in the opset's form
// (attribute below 18, input from 18).
StatusOr<std::vector<Value*>> EmitMean(const Match& m, Axes axes, Rewriter& rw) {
  const Node* sum = reductions::ReductionOf(m.root()->output(0));
  Value* x = sum->input(0);
  std::vector<onnx::AttributeProto> attrs;
  std::vector<Value*> inputs = {x};
  if (!axes.empty()) {
    // From 18 the axes are an input: the ReduceSum's own when it has one (opset >= 13).
    bool has_input = sum->num_inputs() > 1 && sum->input(1);
    if (rw.graph()->OpsetVersion("") >= 18) inputs.push_back(has_input ? sum->input(1) : rw.Int64s(axes));
    else attrs.push_back(Rewriter::AttrInts("axes", axes));
  }
  if (const Attribute* keepdims = sum->FindAttribute("keepdims")) attrs.push_back(keepdims->proto());
  return std::vector<Value*>{rw.Op("ReduceMean", inputs, attrs)};
}

Verdict<Axes> CheckMean(const Match& m) {
  const Node* sum = reductions::ReductionOf(m.root()->output(0));
  if (!sum) return Refuse("no ReduceSum operand");
  std::optional<Axes> axes = WrittenAxes(*sum);
  if (!axes) return Refuse(absl::StrCat("ReduceSum '", sum->name(), "' axes are not a constant"));
  std::string why;
  if (!reductions::IsAverage(m.root()->output(0), nullptr, &why)) return Refuse(why);
  return *axes;
}

}  // namespace

void AddSumToMeanRules(std::vector<std::unique_ptr<RewriteRule>>& rules) {
  for (const char* op : {"Mul", "Div"}) {
    Pattern p("sum-to-mean");
    OpRef sum = p.Op("ReduceSum", {p.Any("x")}).AnyNumberOfInputs();
    OpRef root = p.Op(op, {sum, p.Any("factor")});
    if (std::string(op) == "Mul") root.Commutative();
    rules.push_back(
        std::make_unique<PatternRule<Axes>>("sum-to-mean", std::move(p), root.id(), CheckMean, EmitMean, 2));
  }
}

}  // namespace onnxsurgeon::reductions
