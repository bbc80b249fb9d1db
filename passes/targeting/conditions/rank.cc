// rank>N and rank<N: an input or output of known rank above (below) N.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class RankCondition : public Condition {
 public:
  RankCondition(bool above, int64_t limit) : above_(above), limit_(limit) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    return AnyTensor(n, [&](const Value& v) {
      if (!v.type()->tensor_type().has_shape()) return false;
      const int64_t rank = v.type()->tensor_type().shape().dim_size();
      if (above_ ? rank <= limit_ : rank >= limit_) return false;
      *detail = absl::StrCat("'", v.name(), "' has rank ", rank);
      return true;
    });
  }

 private:
  bool above_;
  int64_t limit_;
};

template <bool kAbove>
StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  int64_t limit = 0;
  if (!absl::SimpleAtoi(args, &limit))
    return absl::InvalidArgumentError(absl::StrCat("'rank", kAbove ? ">" : "<", "': '", args, "' is not an integer"));
  return std::make_unique<RankCondition>(kAbove, limit);
}

}  // namespace

extern const ConditionKind kRankAbove = {"rank>", "rank>N", "an input or output of known rank above N", "",
                                         Parse<true>};
extern const ConditionKind kRankBelow = {"rank<", "rank<N", "an input or output of known rank below N", "",
                                         Parse<false>};

}  // namespace onnxsurgeon::target
