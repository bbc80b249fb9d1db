// The condition registry (conditions.def) and the compilation of a `when` text.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/targeting/conditions/condition.h"

namespace onnxsurgeon::target {

#define CONDITION(SYMBOL) extern const ConditionKind SYMBOL;
#include "passes/targeting/conditions/conditions.def"

bool ConditionKind::TakesArguments() const {
  return !keyword.empty() && (keyword.back() == ':' || keyword.back() == '>' || keyword.back() == '<');
}

const std::vector<const ConditionKind*>& ConditionKinds() {
  static const std::vector<const ConditionKind*> kinds = {
#define CONDITION(SYMBOL) &SYMBOL,
#include "passes/targeting/conditions/conditions.def"
  };
  return kinds;
}

StatusOr<CompiledWhen> CompileWhen(absl::string_view when) {
  if (when.empty()) return CompiledWhen{};
  for (const ConditionKind* kind : ConditionKinds()) {
    const bool match = kind->TakesArguments() ? absl::StartsWith(when, kind->keyword) : when == kind->keyword;
    if (!match) continue;
    OS_ASSIGN_OR_RETURN(std::unique_ptr<const Condition> condition, kind->parse(when.substr(kind->keyword.size())));
    return CompiledWhen{kind, std::move(condition)};
  }
  std::vector<absl::string_view> forms;
  for (const ConditionKind* kind : ConditionKinds()) forms.push_back(kind->grammar);
  return absl::InvalidArgumentError(absl::StrCat("'", when, "' is no condition (want ", absl::StrJoin(forms, ", "),
                                                 "; `onnxsurgeon targets --conditions` says what each means)"));
}

std::string ConditionsText(bool markdown) {
  std::string out;
  for (const ConditionKind* kind : ConditionKinds()) {
    std::string remedy = kind->remedy.empty() ? "" : absl::StrCat(" (removed by ", kind->remedy, ")");
    if (markdown) absl::StrAppend(&out, "- `", kind->grammar, "`: ", kind->doc, remedy, "\n");
    else absl::StrAppend(&out, kind->grammar, "\n    ", kind->doc, remedy, "\n");
  }
  return out;
}

}  // namespace onnxsurgeon::target
