// The pass table as people read it: `onnxsurgeon passes` (text), `passes --json`, and the
// generated reference of docs/passes.md (`passes --markdown`). All three print the same
// PassInfo declarations (passes/passes.def), so none can drift from what the parser accepts.
#pragma once

#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/pass/pass.h"

namespace onnxsurgeon {

// "int >= 0", "auto|op|decomposed|native", "list of fuse-conv-bn|cse|...", "bool".
std::string OptionTypeText(const PassOptionSpec& spec);

// Each pass: its name, summary, steps (a pipeline pass) and options, one per line.
std::string PassListText(const std::vector<const PassInfo*>& passes);
// [{name, summary, options: [{name, type, default, help, choices?, min?}], steps?}].
Json PassListJson(const std::vector<const PassInfo*>& passes);
// The reference section of docs/passes.md: one table row per pass, its options and steps.
std::string PassReferenceMarkdown(const std::vector<const PassInfo*>& passes);

}  // namespace onnxsurgeon
