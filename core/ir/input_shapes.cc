#include "core/ir/input_shapes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace onnxsurgeon {

StatusOr<InputShapes> ParseInputShapes(std::string_view text, ShapeNames names) {
  InputShapes shapes;
  for (absl::string_view piece : absl::StrSplit(absl::string_view(text.data(), text.size()), ';')) {
    std::string item(absl::StripAsciiWhitespace(piece));
    if (item.empty()) continue;
    size_t colon = item.rfind(':');
    bool named = colon != std::string::npos;
    if ((named && (colon == 0 || colon + 1 == item.size())) || (!named && names == ShapeNames::kRequired)) {
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not NAME:DIMS",
                                                     names == ShapeNames::kOptional ? " or DIMS" : "",
                                                     " (e.g. input_ids:1x128)"));
    }
    InputShape s{named ? item.substr(0, colon) : std::string(), {}};
    absl::string_view dims = absl::string_view(item).substr(named ? colon + 1 : 0);
    for (absl::string_view d : absl::StrSplit(dims, absl::ByAnyChar("x,"))) {
      d = absl::StripAsciiWhitespace(d);
      int64_t dim;
      if (d == "?") {
        dim = InputShape::kKeepDim;
      } else if (!absl::SimpleAtoi(d, &dim) || dim < InputShape::kKeepDim) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", std::string(d), "' in '", item, "' is not a dim (a number >= 0, or '?')"));
      }
      s.dims.push_back(dim);
    }
    shapes.push_back(std::move(s));
  }
  return shapes;
}

std::string InputShapesText(const InputShapes& shapes) {
  std::vector<std::string> items;
  for (const InputShape& s : shapes) {
    std::vector<std::string> d;
    for (int64_t v : s.dims) d.push_back(v < 0 ? "?" : absl::StrCat(v));
    items.push_back(absl::StrCat(s.name, ":", absl::StrJoin(d, "x")));
  }
  return absl::StrJoin(items, ";");
}

}  // namespace onnxsurgeon
