// square-ncw-input: input 0 of rank 3 whose dims 1 and 2 are one static size, flattened to
// rank 2. onnx2tf cannot tell NCW from NWC there, and the flattening order depends on it. (A
// Reshape of a square [8,5,5] to rank 4, tf_vit_block's attention, converted right.)
#include "absl/strings/str_cat.h"
#include "core/ir/shape.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class SquareNcwInputCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (n.num_inputs() < 1 || !n.input(0) || n.num_outputs() < 1 || a.types.Rank(n.output(0)) != 2) return false;
    auto dims = StaticShapeOf(n.input(0));
    if (!dims || dims->size() != 3 || (*dims)[1] <= 1 || (*dims)[1] != (*dims)[2]) return false;
    *detail = absl::StrCat("input '", n.input(0)->name(), "' ", ShapeText(*n.input(0)),
                           " is square in its last two axes, flattened to rank 2");
    return true;
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<SquareNcwInputCondition>();
}

}  // namespace

extern const ConditionKind kSquareNcwInput = {
    "square-ncw-input", "square-ncw-input",
    "input 0 of rank 3 whose dims 1 and 2 are one static size, flattened to rank 2 (fuse-reshapes in simplify runs "
    "such regions on 2-D values)",
    "simplify", Parse};

}  // namespace onnxsurgeon::target
