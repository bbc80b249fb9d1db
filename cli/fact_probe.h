// `check --target NAME --probe --allow FACT IN`: is one profile fact real? The target's
// plan runs on the model with only FACT allowed (its places neither block nor get a step:
// passes/targeting/check.h, CheckOptions::allowed_facts), every other blocker removed as
// usual, and the target's real backend runs the result against onnxruntime on the model
// (core/verify/backend_check.h). Verdicts:
//   real      the backend refuses the result or computes it wrong: the fact is needed
//   false     the backend runs it and matches: the profile refuses what the backend runs,
//             so the fact must be narrowed or removed (with a probe recorded in targets/probes)
//   unproven  the question cannot be asked here: another fact still blocks (the model
//             would not isolate FACT), or after the plan nothing falls under FACT
// Exit 0 real, 1 false or unproven, 2 usage error or no backend installed.
#pragma once

#include <string>

#include "passes/targeting/compiled_profile.h"

namespace onnxsurgeon::cli {

int ProbeFact(const target::CompiledProfile& target, const std::string& input, const std::string& input_shapes,
              const std::string& fact, bool json);

}  // namespace onnxsurgeon::cli
