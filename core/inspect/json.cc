#include "core/inspect/json.h"

namespace onnxsurgeon {

std::string DumpJson(const Json& json, int indent) {
  return json.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace onnxsurgeon
