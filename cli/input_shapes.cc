#include "cli/input_shapes.h"

#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/util/suggest.h"

namespace onnxsurgeon::cli {

bool LooksLikeInputShape(const std::string& arg) {
  static const std::regex kShape(R"(^([^;]+:)?(\?|-?\d+)([,x](\?|-?\d+))*(;.*)?$)");
  return std::regex_match(arg, kShape);
}

StatusOr<std::vector<InputShapeSpec>> ParseInputShapes(const std::vector<std::string>& args) {
  std::vector<InputShapeSpec> specs;
  for (const std::string& arg : args) {
    for (absl::string_view item : absl::StrSplit(arg, ';', absl::SkipWhitespace())) {
      InputShapeSpec spec;
      absl::string_view dims = item;
      if (size_t colon = item.rfind(':'); colon != absl::string_view::npos) {
        spec.input = std::string(item.substr(0, colon));
        dims = item.substr(colon + 1);
      }
      for (absl::string_view d : absl::StrSplit(dims, absl::ByAnyChar(",x"))) {
        int64_t v;
        if (d == "?") v = -1;
        else if (!absl::SimpleAtoi(d, &v) || v < -1) {
          return absl::InvalidArgumentError(absl::StrCat("--input-shapes: '", std::string(item),
                                                         "' is not NAME:DIMS or DIMS, e.g. images:1,3,320,320"));
        }
        spec.dims.push_back(v);
      }
      specs.push_back(std::move(spec));
    }
  }
  return specs;
}

StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveInputShapes(const std::vector<InputShapeSpec>& specs,
                                                                         const Model& model) {
  std::vector<std::string> inputs;
  for (Value* v : model.graph().inputs())
    if (!v->IsInitializer()) inputs.push_back(v->name());
  std::map<std::string, std::vector<int64_t>> out;
  for (const InputShapeSpec& spec : specs) {
    std::string name = spec.input;
    if (name.empty()) {
      if (inputs.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input-shapes: a shape without a name needs a model with one input; this one has ",
                         inputs.size(), " (", absl::StrJoin(inputs, ", "), "): write NAME:DIMS"));
      }
      name = inputs.front();
    } else if (std::find(inputs.begin(), inputs.end(), name) == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--input-shapes: the model has no input '", name, "'",
                                                     DidYouMean(name, inputs),
                                                     "; its inputs: ", absl::StrJoin(inputs, ", ")));
    }
    if (out.count(name)) return absl::InvalidArgumentError(absl::StrCat("--input-shapes: '", name, "' given twice"));
    out[name] = spec.dims;
  }
  return out;
}

std::string SetInputShapeValue(const std::map<std::string, std::vector<int64_t>>& shapes) {
  std::vector<std::string> items;
  for (const auto& [name, dims] : shapes) {
    std::vector<std::string> d;
    for (int64_t v : dims) d.push_back(v < 0 ? "?" : absl::StrCat(v));
    items.push_back(absl::StrCat(name, ":", absl::StrJoin(d, "x")));
  }
  return absl::StrJoin(items, ";");
}

}  // namespace onnxsurgeon::cli
