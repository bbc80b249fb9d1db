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

StatusOr<InputShapes> ParseInputShapeArgs(const std::vector<std::string>& args) {
  auto shapes = ParseInputShapes(absl::StrJoin(args, ";"), ShapeNames::kOptional);
  if (!shapes.ok()) return absl::InvalidArgumentError(absl::StrCat("--input-shapes: ", shapes.status().message()));
  return shapes;
}

StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveInputShapes(const InputShapes& specs, const Model& model) {
  std::vector<std::string> inputs;
  for (Value* v : model.graph().inputs())
    if (!v->IsInitializer()) inputs.push_back(v->name());
  std::map<std::string, std::vector<int64_t>> out;
  for (const InputShape& spec : specs) {
    std::string name = spec.name;
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
  InputShapes items;
  for (const auto& [name, dims] : shapes) items.push_back({name, dims});
  return InputShapesText(items);
}

}  // namespace onnxsurgeon::cli
