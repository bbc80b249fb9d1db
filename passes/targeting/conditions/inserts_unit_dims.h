// What the reshape-to-unsqueeze plan step reads of an inserts-unit-dims condition.
#pragma once

#include <cstdint>
#include <optional>

#include "passes/targeting/conditions/condition.h"

namespace onnxsurgeon::target {

// The least output rank `c` names (inserts-unit-dims:N), or none for another kind.
std::optional<int64_t> InsertsUnitDimsMinRank(const Condition& c);

}  // namespace onnxsurgeon::target
