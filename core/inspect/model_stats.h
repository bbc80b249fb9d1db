// The summary a rewrite prints on stderr: what changed, in numbers (op counts, nodes,
// weights, file size, opsets), how long it took, and which passes did something.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/inspect/inspect.h"

namespace onnxsurgeon {

struct RunSummary {
  std::string input, output;  // output empty for --dry-run
  InspectReport before, after;
  std::optional<uint64_t> file_before, file_after;
  double seconds = 0;
  std::vector<std::string> changed_passes;
};

// 1234 -> "1234 B", 2.5e6 -> "2.4 MiB".
std::string HumanBytes(uint64_t bytes);

// The model file plus the external-data files its report lists; nothing when unreadable.
std::optional<uint64_t> ModelFileBytes(const std::string& path, const InspectReport& report);

// "ai.onnx 14, com.microsoft 1".
std::string OpsetsText(const InspectReport& report);

// Header line, then the op-count table (changed rows only), nodes, initializer bytes,
// file size, opsets, time and the passes that changed something.
std::string FormatRunSummary(const RunSummary& summary);

}  // namespace onnxsurgeon
