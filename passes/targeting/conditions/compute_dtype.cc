// compute-dtype:TYPE: the node computes in TYPE (an output of that type). Conversions and
// constants compute nothing, so Cast, CastLike and Constant never match.
// compute-dtype:TYPE,opset>=N: and its domain's opset is at least N (a kernel of one op
// version: onnxruntime 1.14's float16 Relu-14 crashes where Relu-13 runs).
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class ComputeDtypeCondition : public Condition {
 public:
  ComputeDtypeCondition(absl::string_view written, int64_t min_opset)
      : type_(absl::AsciiStrToLower(written)), written_(written), min_opset_(min_opset) {}
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (n.Is("Cast") || n.Is("CastLike") || n.Is("Constant")) return false;
    const int64_t opset = n.graph()->OpsetVersion(n.domain());
    if (opset < min_opset_) return false;
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      int32_t t = a.types.ElemType(v);
      if (t == 0 || DataTypeNameLower(t) != type_) continue;
      *detail = absl::StrCat("computes '", v->name(), "' in ", type_);
      if (min_opset_ > 0) absl::StrAppend(detail, " at opset ", opset);
      return true;
    }
    return false;
  }
  std::string WhyNoRemedy(const Node&, const RemedyContext& context) const override {
    if (!context.every_op) return "";
    return absl::StrCat("onnxsurgeon does not widen a model's compute type; export it in another type than ", written_);
  }

 private:
  std::string type_;     // lower case
  std::string written_;  // as the profile writes it
  int64_t min_opset_;    // 0: any opset
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_RETURN_IF_ERROR(NeedArgument(args, "compute-dtype:"));
  const size_t comma = args.find(',');
  if (comma == absl::string_view::npos) return std::make_unique<ComputeDtypeCondition>(args, 0);
  absl::string_view rest = args.substr(comma + 1);
  if (!absl::ConsumePrefix(&rest, "opset>="))
    return absl::InvalidArgumentError(absl::StrCat("'compute-dtype:", args, "': after the type, want ',opset>=N'"));
  OS_ASSIGN_OR_RETURN(int64_t min_opset, ParseIndex(rest, "compute-dtype:"));
  return std::make_unique<ComputeDtypeCondition>(args.substr(0, comma), min_opset);
}

}  // namespace

extern const ConditionKind kComputeDtype = {
    "compute-dtype:", "compute-dtype:TYPE, compute-dtype:TYPE,opset>=N",
    "the node computes in TYPE: an output of element type TYPE (Cast, CastLike and Constant compute nothing and "
    "never match); with ops = [\"*\"], a type the target cannot compute; ',opset>=N': only where its domain's "
    "opset is at least N (one op version's kernel)",
    "", Parse};

}  // namespace onnxsurgeon::target
