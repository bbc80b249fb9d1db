#include "core/pass/listing.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/pass/fixed_point.h"

namespace onnxsurgeon {
namespace {

bool HasMin(const PassOptionSpec& spec) {
  return spec.type == OptionType::kInt && spec.min != std::numeric_limits<int64_t>::min();
}

std::string DefaultText(const PassOptionSpec& spec) { return spec.default_value.empty() ? "none" : spec.default_value; }

// A table cell: '|' would end it.
std::string Cell(const std::string& text) { return absl::StrReplaceAll(text, {{"|", "\\|"}}); }

}  // namespace

std::string OptionTypeText(const PassOptionSpec& spec) {
  switch (spec.type) {
    case OptionType::kEnum: return absl::StrJoin(spec.choices, "|");
    case OptionType::kList:
      return spec.choices.empty() ? "list" : absl::StrCat("list of ", absl::StrJoin(spec.choices, "|"));
    case OptionType::kInt: return HasMin(spec) ? absl::StrCat("int >= ", spec.min) : "int";
    default: return std::string(OptionTypeName(spec.type));
  }
}

std::string PassListText(const std::vector<const PassInfo*>& passes) {
  std::string out;
  for (const PassInfo* p : passes) {
    absl::StrAppend(&out, p->name, "\n    ", p->summary, "\n");
    if (p->pipeline) {
      absl::StrAppend(
          &out, "    steps (repeated to a fixed point, at most max-rounds times): ", p->pipeline->StepsText(), "\n");
    }
    for (size_t i = 0; i < p->options.size(); ++i) {
      const PassOptionSpec& o = p->options[i];
      absl::StrAppend(&out, "    ", i == 0 ? "[primary] " : "", o.name, " (", OptionTypeText(o),
                      ", default: ", DefaultText(o), "): ", o.help, "\n");
    }
  }
  return out;
}

Json PassListJson(const std::vector<const PassInfo*>& passes) {
  Json out = Json::array();
  for (const PassInfo* p : passes) {
    Json options = Json::array();
    for (const PassOptionSpec& o : p->options) {
      Json j = {{"name", o.name},
                {"type", std::string(OptionTypeName(o.type))},
                {"default", o.default_value},
                {"help", o.help}};
      if (!o.choices.empty()) j["choices"] = o.choices;
      if (HasMin(o)) j["min"] = o.min;
      options.push_back(std::move(j));
    }
    Json pass = {{"name", p->name}, {"summary", p->summary}, {"options", std::move(options)}};
    if (p->pipeline) pass["steps"] = p->pipeline->steps;
    out.push_back(std::move(pass));
  }
  return out;
}

std::string PassReferenceMarkdown(const std::vector<const PassInfo*>& passes) {
  std::string out =
      "| pass | what it does | options: `name` (type, default): what it sets; the first is the primary (`pass=value`) "
      "|\n"
      "| --- | --- | --- |\n";
  for (const PassInfo* p : passes) {
    std::vector<std::string> cells;
    if (p->pipeline) {
      cells.push_back(absl::StrCat("steps: `", absl::StrJoin(p->pipeline->steps, "`, `"), "`"));
    }
    for (const PassOptionSpec& o : p->options) {
      cells.push_back(absl::StrCat("`", o.name, "` (", OptionTypeText(o), ", ", DefaultText(o), "): ", o.help));
    }
    absl::StrAppend(&out, "| `", p->name, "` | ", Cell(p->summary), " | ", Cell(absl::StrJoin(cells, "<br>")), " |\n");
  }
  return out;
}

}  // namespace onnxsurgeon
