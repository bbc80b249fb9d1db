// JSON for reports (inspect, check, diff, --report json): nlohmann::ordered_json, so keys
// keep the order they were written in, and one dump function for every writer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace onnxsurgeon {

using Json = nlohmann::ordered_json;

// Compact (indent < 0) or indented text, with a trailing newline. Strings from a model
// (names, doc strings) need not be valid UTF-8: bad bytes become U+FFFD instead of an
// exception, so a report on a damaged model still comes out.
std::string DumpJson(const Json& json, int indent = -1);

}  // namespace onnxsurgeon
