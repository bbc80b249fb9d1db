#include "core/pass/pass.h"

#include <cctype>
#include <deque>

#include "absl/strings/str_cat.h"
#include "core/util/suggest.h"

namespace onnxsurgeon {

Status CheckPassOptions(const PassInfo& info, const PassOptions& options) {
  for (const auto& [key, value] : options.given()) {
    const PassOptionSpec* spec = nullptr;
    for (const PassOptionSpec& o : info.options)
      if (o.name == key) spec = &o;
    if (!spec) {
      std::vector<std::string> known;
      for (const PassOptionSpec& o : info.options) known.push_back(o.name);
      return absl::InvalidArgumentError(
          absl::StrCat("pass '", info.name, "' has no option '", key, "'", DidYouMean(key, known)));
    }
    if (Status s = CheckOptionValue(*spec, value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("option '", key, "' ", s.message()));
    }
  }
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<Pass>> CreatePass(const PassInfo& info, const PassOptions& options) {
  OS_RETURN_IF_ERROR(CheckPassOptions(info, options));
  // The getters read this pass's own table, whatever table the caller bound: a PipelineItem
  // made by hand (not by ParsePipeline) has none, and its defaults must still be there.
  return info.create(PassOptions(info.options, options.given()));
}

namespace {

// Run-time passes; a deque keeps the PassInfo addresses pipelines hold stable.
std::deque<PassInfo>& Registered() {
  static auto* passes = new std::deque<PassInfo>();  // never destroyed: may hold Python objects
  return *passes;
}

const std::vector<PassInfo>* g_builtin = nullptr;  // set once at start, before any thread

}  // namespace

void SetBuiltinPasses(const std::vector<PassInfo>& table) { g_builtin = &table; }

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> none;
  return g_builtin ? *g_builtin : none;
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& p : AllPasses())
    if (p.name == name) return &p;
  for (const PassInfo& p : Registered())
    if (p.name == name) return &p;
  return nullptr;
}

Status RegisterPass(PassInfo info) {
  bool kebab = !info.name.empty() && std::isalpha(static_cast<unsigned char>(info.name[0]));
  for (char c : info.name)
    kebab &= std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  if (!kebab) {
    return absl::InvalidArgumentError(
        absl::StrCat("pass name '", info.name, "' must be kebab-case (lower-case letters, digits, '-')"));
  }
  for (const PassInfo& p : AllPasses())
    if (p.name == info.name) return absl::AlreadyExistsError(absl::StrCat("'", info.name, "' is a built-in pass"));
  for (PassInfo& p : Registered()) {
    if (p.name == info.name) {
      p = std::move(info);
      return absl::OkStatus();
    }
  }
  Registered().push_back(std::move(info));
  return absl::OkStatus();
}

std::vector<const PassInfo*> RegisteredPasses() {
  std::vector<const PassInfo*> out;
  for (const PassInfo& p : Registered()) out.push_back(&p);
  return out;
}

StatusOr<PassResult> RunWithinBudget(Pass& pass, const std::string& name, Model& model, const PassContext& context) {
  RewriteBudget* budget = context.budget;
  if (budget && budget->exhausted()) return PassResult{};
  const int64_t before = budget ? budget->spent() : 0;
  OS_ASSIGN_OR_RETURN(PassResult result, pass.Run(model, context));
  if (budget && result.changed && budget->spent() == before) budget->Spend(RewriteStep{name, "", {}, {}});
  return result;
}

}  // namespace onnxsurgeon
