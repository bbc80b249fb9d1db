#include "passes/opset/schemas.h"

#include <algorithm>

#include "passes/opset/converter.h"

namespace onnxsurgeon::opset {

const VersionIndex& Versions() {
  static const VersionIndex* index = [] {
    auto* idx = new VersionIndex;
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history())
      (*idx)[{s.domain(), s.Name()}].push_back(s.since_version());
    for (auto& [k, v] : *idx) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    return idx;
  }();
  return *index;
}

const onnx::OpSchema* SchemaAt(const std::string& domain, const std::string& op, int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), domain);
}

int64_t LatestOpset(const std::string& domain) {
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().LastReleaseVersionMap();
  auto it = m.find(domain.empty() ? std::string(onnx::ONNX_DOMAIN) : domain);
  return it == m.end() ? -1 : it->second;
}

}  // namespace onnxsurgeon::opset
