// dtype:TYPE: an input or output of that element type.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class DtypeCondition : public Condition {
 public:
  explicit DtypeCondition(std::string type) : type_(std::move(type)) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    return AnyTensor(n, [&](const Value& v) {
      if (DataTypeNameLower(v.type()->tensor_type().elem_type()) != type_) return false;
      *detail = absl::StrCat("'", v.name(), "' is ", type_);
      return true;
    });
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
