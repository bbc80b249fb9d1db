// cast-from:TYPE (on Cast): an input of element type TYPE cast to another type. A value
// computed from shapes and constants alone does not count: converters fold those first.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class CastFromCondition : public Condition {
 public:
  explicit CastFromCondition(std::string type) : type_(std::move(type)) {}
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (!n.Is("Cast") || n.num_inputs() < 1 || !n.input(0) || n.num_outputs() < 1 || !n.output(0)) return false;
    const int32_t from = a.types.ElemType(n.input(0)), to = a.types.ElemType(n.output(0));
    if (from == 0 || DataTypeNameLower(from) != type_ || from == to) return false;
    if (ShapeDerived(n.input(0))) return false;
    *detail = absl::StrCat("'", n.input(0)->name(), "' ", type_, " -> ", to ? DataTypeNameLower(to) : "another type");
    return true;
  }

 private:
  std::string type_;  // lower case
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_RETURN_IF_ERROR(NeedArgument(args, "cast-from:"));
  return std::make_unique<CastFromCondition>(absl::AsciiStrToLower(args));
}

}  // namespace

extern const ConditionKind kCastFrom = {
    "cast-from:", "cast-from:TYPE",
    "(on Cast) an input of element type TYPE cast to another type, unless it is computed from shapes and constants "
    "alone (converters fold those)",
    "", Parse};

}  // namespace onnxsurgeon::target
