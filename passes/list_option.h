// List-valued pass options. The pipeline grammar reserves ',' '(' ')', so a list value
// separates its items with ';' (docs/pipeline.md): keep=w1;w2  shapes=x:1x3;y:1x4
#pragma once

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace onnxsurgeon::passes {

// "a;b; c" -> {"a", "b", "c"} (spaces around items trimmed, empty items dropped).
inline std::vector<std::string> SplitListOption(const std::string& value) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(value, ';')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

}  // namespace onnxsurgeon::passes
