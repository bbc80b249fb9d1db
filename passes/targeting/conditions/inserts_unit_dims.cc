// inserts-unit-dims:N (on Reshape): a constant-shape Reshape whose output, of rank N or more,
// is its input with only unit dims inserted. Asked of reshape-to-unsqueeze's own facts
// (passes/reshapes/reshape_facts.h), so the condition holds exactly where the pass rewrites.
#include "passes/targeting/conditions/inserts_unit_dims.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/ir/shape.h"
#include "passes/reshapes/reshape_facts.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class InsertsUnitDimsCondition : public Condition {
 public:
  explicit InsertsUnitDimsCondition(int64_t min_rank) : min_rank_(min_rank) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Reshape")) return false;
    auto shapes = passes::reshapes::KnownReshapeShapes(n, nullptr);
    if (!shapes || static_cast<int64_t>(shapes->out.size()) < min_rank_) return false;
    if (!passes::reshapes::InsertedUnitAxes(shapes->in, shapes->out)) return false;
    *detail = absl::StrCat("'", n.input(0)->name(), "' ", ShapeToString(shapes->in), " -> ", ShapeToString(shapes->out),
                           ": only unit dims inserted");
    return true;
  }
  int64_t min_rank() const { return min_rank_; }

 private:
  int64_t min_rank_;
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  int64_t min_rank = 0;
  if (!absl::SimpleAtoi(args, &min_rank))
    return absl::InvalidArgumentError(absl::StrCat("'inserts-unit-dims:", args, "': '", args, "' is not a rank"));
  return std::make_unique<InsertsUnitDimsCondition>(min_rank);
}

}  // namespace

std::optional<int64_t> InsertsUnitDimsMinRank(const Condition& c) {
  const auto* inserts = dynamic_cast<const InsertsUnitDimsCondition*>(&c);
  return inserts ? std::optional<int64_t>(inserts->min_rank()) : std::nullopt;
}

extern const ConditionKind kInsertsUnitDims = {
    "inserts-unit-dims:", "inserts-unit-dims:N",
    "(on Reshape) a constant-shape Reshape whose output, of rank N or more, is its input with only unit dims "
    "inserted",
    "reshape-to-unsqueeze", Parse};

}  // namespace onnxsurgeon::target
