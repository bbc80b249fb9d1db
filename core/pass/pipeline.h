// The pipeline grammar, shared by the CLI (--pass) and Python (onnxsurgeon.run):
//
//   pipeline := item (',' item)*
//   item     := name                      e.g. dce
//             | name '=' value            the pass's primary option, e.g. downgrade-opset=15
//             | name '(' key '=' value (',' key '=' value)* ')'
//                                         e.g. fold-constants(max-size=4096)
//   name, key := [A-Za-z0-9_-]+
//   value    := '"' any text '"' | "'" any text "'"
//             | text without ( ) and without a ',' that is not followed by a digit
//               or '?' (spaces trimmed): images:1,3,320,320 is one value
//
// Errors name the column and underline it, and list the known passes or options.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/status.h"
#include "core/pass/pass.h"

namespace onnxsurgeon {

struct PipelineItem {
  const PassInfo* info = nullptr;
  PassOptions options;
  size_t column = 0;  // 1-based, where the pass name starts
};

// Given pipeline text. Execute parses and validates it against the pass table.
// Result the items, or an InvalidArgument error whose message shows the column.
StatusOr<std::vector<PipelineItem>> ParsePipeline(std::string_view text);

}  // namespace onnxsurgeon
