#include "core/pass/options.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/util/suggest.h"

namespace onnxsurgeon {
namespace {

std::optional<bool> ParseBool(std::string_view text) {
  std::string v = absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// "erf, tanh or sigmoid".
std::string OneOf(const std::vector<std::string>& choices) {
  if (choices.size() < 2) return absl::StrJoin(choices, "");
  std::vector<std::string> head(choices.begin(), choices.end() - 1);
  return absl::StrCat(absl::StrJoin(head, ", "), " or ", choices.back());
}

[[noreturn]] void Bug(const std::string& message) {
  std::fprintf(stderr, "onnxsurgeon: internal error: %s\n", message.c_str());
  std::abort();
}

}  // namespace

std::string_view OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool: return "bool";
    case OptionType::kInt: return "int";
    case OptionType::kFloat: return "float";
    case OptionType::kString: return "string";
    case OptionType::kEnum: return "enum";
    case OptionType::kList: return "list";
    case OptionType::kShapes: return "shapes";
  }
  return "?";
}

namespace option {

PassOptionSpec Bool(std::string name, bool default_value, std::string help) {
  return {std::move(name), OptionType::kBool, default_value ? "true" : "false", std::move(help)};
}
PassOptionSpec Int(std::string name, int64_t default_value, std::string help, int64_t min) {
  PassOptionSpec s{std::move(name), OptionType::kInt, absl::StrCat(default_value), std::move(help)};
  s.min = min;
  return s;
}
PassOptionSpec OptionalInt(std::string name, std::string help, int64_t min) {
  PassOptionSpec s{std::move(name), OptionType::kInt, "", std::move(help)};
  s.min = min;
  return s;
}
PassOptionSpec Float(std::string name, double default_value, std::string help) {
  return {std::move(name), OptionType::kFloat, absl::StrCat(default_value), std::move(help)};
}
PassOptionSpec String(std::string name, std::string default_value, std::string help) {
  return {std::move(name), OptionType::kString, std::move(default_value), std::move(help)};
}
PassOptionSpec Enum(std::string name, std::vector<std::string> choices, std::string default_value, std::string help) {
  return {std::move(name), OptionType::kEnum, std::move(default_value), std::move(help), std::move(choices)};
}
PassOptionSpec List(std::string name, std::string default_value, std::string help, std::vector<std::string> choices) {
  return {std::move(name), OptionType::kList, std::move(default_value), std::move(help), std::move(choices)};
}
PassOptionSpec Shapes(std::string name, std::string help) {
  return {std::move(name), OptionType::kShapes, "", std::move(help)};
}

}  // namespace option

std::vector<std::string> SplitListOption(std::string_view value) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(absl::string_view(value.data(), value.size()), ';')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

Status CheckOptionValue(const PassOptionSpec& spec, std::string_view value) {
  auto want = [&](std::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("wants ", std::string(what), ", got '", std::string(value), "'"));
  };
  switch (spec.type) {
    case OptionType::kBool:
      if (!ParseBool(value)) return want("true or false");
      return absl::OkStatus();
    case OptionType::kInt: {
      int64_t v;
      std::string wanted =
          spec.min == std::numeric_limits<int64_t>::min() ? "an integer" : absl::StrCat("an integer >= ", spec.min);
      if (!absl::SimpleAtoi(absl::string_view(value.data(), value.size()), &v) || v < spec.min) return want(wanted);
      return absl::OkStatus();
    }
    case OptionType::kFloat: {
      double v;
      if (!absl::SimpleAtod(absl::string_view(value.data(), value.size()), &v)) return want("a number");
      return absl::OkStatus();
    }
    case OptionType::kString: return absl::OkStatus();
    case OptionType::kEnum:
      for (const std::string& c : spec.choices)
        if (c == value) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat("wants ", OneOf(spec.choices), ", got '", std::string(value), "'",
                                                     DidYouMean(value, spec.choices)));
    case OptionType::kList:
      if (spec.choices.empty()) return absl::OkStatus();
      for (const std::string& item : SplitListOption(value)) {
        bool known = false;
        for (const std::string& c : spec.choices) known |= c == item;
        if (!known) {
          return absl::InvalidArgumentError(absl::StrCat("has no choice '", item, "'", DidYouMean(item, spec.choices),
                                                         "; its choices: ", absl::StrJoin(spec.choices, ", ")));
        }
      }
      return absl::OkStatus();
    case OptionType::kShapes:
      if (auto shapes = ParseInputShapes(value, ShapeNames::kRequired); !shapes.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("wants NAME:DIMS items: ", shapes.status().message()));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

const PassOptionSpec& PassOptions::Spec(const std::string& key, std::initializer_list<OptionType> types) const {
  if (specs_) {
    for (const PassOptionSpec& s : *specs_) {
      if (s.name != key) continue;
      for (OptionType t : types)
        if (s.type == t) return s;
      Bug(absl::StrCat("option '", key, "' is declared ", std::string(OptionTypeName(s.type)),
                       ", read as another type"));
    }
  }
  Bug(absl::StrCat("option '", key, "' is read but not declared in the pass table"));
}

const std::string& PassOptions::Raw(const PassOptionSpec& spec) const {
  auto it = given_.find(spec.name);
  return it == given_.end() ? spec.default_value : it->second;
}

bool PassOptions::Bool(const std::string& key) const {
  return ParseBool(Raw(Spec(key, {OptionType::kBool}))).value_or(false);
}

int64_t PassOptions::Int(const std::string& key) const {
  const PassOptionSpec& spec = Spec(key, {OptionType::kInt});
  int64_t v;
  if (!absl::SimpleAtoi(Raw(spec), &v)) Bug(absl::StrCat("option '", key, "' read without a value"));
  return v;
}

double PassOptions::Float(const std::string& key) const {
  double v = 0;
  (void)absl::SimpleAtod(Raw(Spec(key, {OptionType::kFloat})), &v);
  return v;
}

const std::string& PassOptions::String(const std::string& key) const {
  return Raw(Spec(key, {OptionType::kString, OptionType::kEnum, OptionType::kList, OptionType::kShapes}));
}

std::vector<std::string> PassOptions::List(const std::string& key) const {
  return SplitListOption(Raw(Spec(key, {OptionType::kList})));
}

InputShapes PassOptions::Shapes(const std::string& key) const {
  auto shapes = ParseInputShapes(Raw(Spec(key, {OptionType::kShapes})), ShapeNames::kRequired);
  return shapes.ok() ? *std::move(shapes) : InputShapes{};
}

}  // namespace onnxsurgeon
