// compute-dtype:TYPE: the node computes in TYPE (an output of that type). Conversions and
// constants compute nothing, so Cast, CastLike and Constant never match.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class ComputeDtypeCondition : public Condition {
 public:
  explicit ComputeDtypeCondition(absl::string_view written)
      : type_(absl::AsciiStrToLower(written)), written_(written) {}
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (n.Is("Cast") || n.Is("CastLike") || n.Is("Constant")) return false;
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      int32_t t = a.types.ElemType(v);
      if (t == 0 || DataTypeNameLower(t) != type_) continue;
      *detail = absl::StrCat("computes '", v->name(), "' in ", type_);
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
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_RETURN_IF_ERROR(NeedArgument(args, "compute-dtype:"));
  return std::make_unique<ComputeDtypeCondition>(args);
}

}  // namespace

extern const ConditionKind kComputeDtype = {
    "compute-dtype:", "compute-dtype:TYPE",
    "the node computes in TYPE: an output of element type TYPE (Cast, CastLike and Constant compute nothing and "
    "never match); with ops = [\"*\"], a type the target cannot compute",
    "", Parse};

}  // namespace onnxsurgeon::target
