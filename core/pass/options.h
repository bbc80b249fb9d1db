// Typed pass options: what a pass declares (name, type, default, choices, help) in the pass
// table (passes/passes.def), and the values a pipeline gives, checked against that
// declaration once. A pass reads its options through typed getters that cannot fail: the
// value was validated (and the default filled in) before the pass was made. The listing
// (`onnxsurgeon passes`), its JSON, docs/passes.md's reference and the pipeline parser's
// errors all read the same declaration.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/input_shapes.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

enum class OptionType {
  kBool,    // true|false (also 1|0, yes|no, on|off)
  kInt,     // a decimal integer, at least `min`
  kFloat,   // a decimal number
  kString,  // any text
  kEnum,    // one of `choices`
  kList,    // ';'-separated items (each one of `choices` when there are choices)
  kShapes,  // ';'-separated NAME:DIMS items, DIMS like 1x3x224x224 ('?' keeps a dim)
};

// "bool", "int", ...: how the listing and the docs name a type.
std::string_view OptionTypeName(OptionType type);

struct PassOptionSpec {
  std::string name;
  OptionType type = OptionType::kString;
  std::string default_value;  // as written in a pipeline; "" with no default: unset
  std::string help;
  std::vector<std::string> choices;                   // kEnum, and kList when its items are a fixed set
  int64_t min = std::numeric_limits<int64_t>::min();  // kInt
};

// Declaring options in the pass table reads like the option: Int("max-size", 1 << 20, ...).
namespace option {
PassOptionSpec Bool(std::string name, bool default_value, std::string help);
PassOptionSpec Int(std::string name, int64_t default_value, std::string help,
                   int64_t min = std::numeric_limits<int64_t>::min());
// An integer without a default: the pass checks PassOptions::Has.
PassOptionSpec OptionalInt(std::string name, std::string help, int64_t min = std::numeric_limits<int64_t>::min());
PassOptionSpec Float(std::string name, double default_value, std::string help);
PassOptionSpec String(std::string name, std::string default_value, std::string help);
PassOptionSpec Enum(std::string name, std::vector<std::string> choices, std::string default_value, std::string help);
PassOptionSpec List(std::string name, std::string default_value, std::string help,
                    std::vector<std::string> choices = {});
PassOptionSpec Shapes(std::string name, std::string help);
}  // namespace option

// Given a spec and a value as written. Execute checks it against the type, range and
// choices. Result OK, or an InvalidArgument error saying what the option wants (with a
// "did you mean" for a misspelt choice); the message does not repeat the option's name.
Status CheckOptionValue(const PassOptionSpec& spec, std::string_view value);

// One NAME:DIMS item of a kShapes option.

// "a;b; c" -> {"a", "b", "c"}: a kList value's items, trimmed, empty items dropped.
std::vector<std::string> SplitListOption(std::string_view value);

// The options of one pipeline item: the values given, over the declared defaults.
class PassOptions {
 public:
  PassOptions() = default;
  // Values as written (not checked here: CheckPassOptions, or ParsePipeline, does that).
  PassOptions(const std::vector<PassOptionSpec>& specs, std::map<std::string, std::string> given)
      : specs_(&specs), given_(std::move(given)) {}

  // Whether the pipeline gave `key` (a default does not count).
  bool Has(const std::string& key) const { return given_.count(key) > 0; }
  // Typed getters for a declared option: the given value, else its default. Asking for an
  // undeclared option, the wrong type, or an unset OptionalInt is a bug and aborts.
  bool Bool(const std::string& key) const;
  int64_t Int(const std::string& key) const;
  double Float(const std::string& key) const;
  // The value as written: kString, kEnum, and kList or kShapes as text.
  const std::string& String(const std::string& key) const;
  std::vector<std::string> List(const std::string& key) const;
  // A kShapes value: NAME:DIMS items (core/ir/input_shapes.h), names required.
  InputShapes Shapes(const std::string& key) const;

  // The values given, as written (for a pipeline rewritten before it runs).
  const std::map<std::string, std::string>& given() const { return given_; }
  const std::vector<PassOptionSpec>* specs() const { return specs_; }

 private:
  const PassOptionSpec& Spec(const std::string& key, std::initializer_list<OptionType> types) const;
  const std::string& Raw(const PassOptionSpec& spec) const;

  const std::vector<PassOptionSpec>* specs_ = nullptr;
  std::map<std::string, std::string> given_;
};

}  // namespace onnxsurgeon
