#include "core/inspect/model_stats.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;

std::string HumanBytes(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", v, units[u]);
}

std::optional<uint64_t> ModelFileBytes(const std::string& path, const InspectReport& report) {
  std::error_code ec;
  uint64_t total = fs::file_size(path, ec);
  if (ec) return std::nullopt;
  fs::path dir = fs::path(path).parent_path();
  for (const auto& f : report.external_data) {
    uint64_t n = fs::file_size(dir / f.location, ec);
    if (!ec) total += n;
  }
  return total;
}

std::string OpsetsText(const InspectReport& report) {
  std::vector<std::string> parts;
  for (const auto& [domain, version] : report.opsets)
    parts.push_back(absl::StrCat(domain.empty() ? "ai.onnx" : domain, " ", version));
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

std::string FormatRunSummary(const RunSummary& s) {
  std::string out = absl::StrCat(s.input, " -> ", s.output.empty() ? "(no model written)" : s.output, " in ",
                                 absl::StrFormat("%.2f", s.seconds), " s\n");
  // Op rows that changed, widest name first column.
  std::set<std::string> ops;
  for (const auto& [op, n] : s.before.op_histogram) ops.insert(op);
  for (const auto& [op, n] : s.after.op_histogram) ops.insert(op);
  std::vector<std::array<std::string, 3>> rows;
  auto count = [](const std::map<std::string, int64_t>& h, const std::string& op) {
    auto it = h.find(op);
    return it == h.end() ? int64_t{0} : it->second;
  };
  for (const std::string& op : ops) {
    int64_t a = count(s.before.op_histogram, op), b = count(s.after.op_histogram, op);
    if (a != b) rows.push_back({op, absl::StrCat(a), absl::StrCat(b)});
  }
  auto file = [](const std::optional<uint64_t>& n) { return n ? HumanBytes(*n) : std::string("-"); };
  std::vector<std::array<std::string, 3>> totals = {
      {"nodes", absl::StrCat(s.before.total_node_count), absl::StrCat(s.after.total_node_count)},
      {"initializers", HumanBytes(s.before.initializer_bytes), HumanBytes(s.after.initializer_bytes)},
      {"file size", file(s.file_before), file(s.file_after)},
  };
  // A quantized model (before or after): what makes it one, so a run that de-quantizes says so.
  const QuantizationStats &qa = s.before.quantization, &qb = s.after.quantization;
  if (qa.any() || qb.any()) {
    totals.push_back({"Q/DQ nodes", absl::StrCat(qa.q, "/", qa.dq), absl::StrCat(qb.q, "/", qb.dq)});
    if (qa.qoperator || qb.qoperator)
      totals.push_back({"QOperator nodes", absl::StrCat(qa.qoperator), absl::StrCat(qb.qoperator)});
    totals.push_back({"quantized weights", HumanBytes(qa.weight_bytes), HumanBytes(qb.weight_bytes)});
  }
  size_t w0 = 12, w1 = 6;
  for (const auto* list : {&rows, &totals}) {
    for (const auto& r : *list) {
      w0 = std::max(w0, r[0].size());
      w1 = std::max(w1, r[1].size());
    }
  }
  auto line = [&](const std::array<std::string, 3>& r) {
    return absl::StrFormat("  %-*s %*s -> %s\n", static_cast<int>(w0), r[0], static_cast<int>(w1), r[1], r[2]);
  };
  if (rows.empty()) {
    absl::StrAppend(&out, "  op counts unchanged\n");
  } else {
    absl::StrAppend(&out, absl::StrFormat("  %-*s %*s    %s\n", static_cast<int>(w0), "op", static_cast<int>(w1),
                                          "before", "after"));
    for (const auto& r : rows) absl::StrAppend(&out, line(r));
  }
  for (const auto& r : totals) absl::StrAppend(&out, line(r));
  std::string before = OpsetsText(s.before), after = OpsetsText(s.after);
  absl::StrAppend(&out, absl::StrFormat("  %-*s %s\n", static_cast<int>(w0), "opset",
                                        before == after ? before + " (unchanged)" : before + " -> " + after));
  absl::StrAppend(&out, absl::StrFormat("  %-*s %s\n", static_cast<int>(w0), "changed by",
                                        s.changed_passes.empty() ? "no pass" : absl::StrJoin(s.changed_passes, ", ")));
  return out;
}

}  // namespace onnxsurgeon
