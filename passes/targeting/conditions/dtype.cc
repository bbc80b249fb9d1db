// dtype:TYPE: an input or output of that element type (typed by the type service, so a
// weight counts: an initializer carries its type in its tensor, not in a value_info).
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class DtypeCondition : public Condition {
 public:
  explicit DtypeCondition(std::string type) : type_(std::move(type)) {}
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    auto is = [&](const Value* v) {
      if (!v) return false;
      int32_t t = a.types.ElemType(v);
      if (t == 0 && v->type() && v->type()->has_tensor_type()) t = v->type()->tensor_type().elem_type();
      if (t == 0 || DataTypeNameLower(t) != type_) return false;
      *detail = absl::StrCat("'", v->name(), "' is ", type_);
      return true;
    };
    for (const Value* v : n.inputs())
      if (is(v)) return true;
    for (const Value* v : n.outputs())
      if (is(v)) return true;
    return false;
  }

 private:
  std::string type_;  // lower case
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_RETURN_IF_ERROR(NeedArgument(args, "dtype:"));
  return std::make_unique<DtypeCondition>(absl::AsciiStrToLower(args));
}

}  // namespace

extern const ConditionKind kDtype = {"dtype:", "dtype:TYPE",
                                     "an input or output of element type TYPE (onnx's name, lower case)", "", Parse};

}  // namespace onnxsurgeon::target
