// unknown-rank-output (an output of the node, or of one of its branches, of unknown rank) and
// unknown-rank-branch-output (of a branch only).
#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

// Tensors without a shape; sequences and other non-tensors are other facts' business.
bool UnknownRank(const Value* v, const std::string& what, std::string* detail) {
  if (!v) return false;
  if (v->type() && v->type()->has_tensor_type() && v->type()->tensor_type().has_shape()) return false;
  if (v->type() && !v->type()->has_tensor_type()) return false;
  *detail = absl::StrCat(what, " '", v->name(), "' has no known rank");
  return true;
}

class UnknownRankCondition : public Condition {
 public:
  explicit UnknownRankCondition(bool branches_only) : branches_only_(branches_only) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!branches_only_)
      for (const Value* v : n.outputs())
        if (UnknownRank(v, "output", detail)) return true;
    for (Graph* sub : n.subgraphs())
      for (const Value* v : sub->outputs())
        if (UnknownRank(v, absl::StrCat("branch '", sub->name(), "' output"), detail)) return true;
    return false;
  }

 private:
  bool branches_only_;
};

template <bool kBranchesOnly>
StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<UnknownRankCondition>(kBranchesOnly);
}

}  // namespace

extern const ConditionKind kUnknownRankOutput = {"unknown-rank-output", "unknown-rank-output",
                                                 "an output of the node, or of one of its branches, of unknown rank",
                                                 "", Parse<false>};
extern const ConditionKind kUnknownRankBranchOutput = {"unknown-rank-branch-output", "unknown-rank-branch-output",
                                                       "an output of one of the node's branches of unknown rank", "",
                                                       Parse<true>};

}  // namespace onnxsurgeon::target
