#include "core/io/external_location.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;

StatusOr<std::string> ResolveExternalLocation(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name) {
  auto refuse = [&](std::string_view why) {
    return absl::PermissionDeniedError(absl::StrCat("tensor '", tensor_name, "': external data location '", location,
                                                    "' ", std::string(why),
                                                    "; it must be a relative path inside the model's folder"));
  };
  if (location.empty()) return refuse("is empty");
  // Only '/' separates folders here (the loader is POSIX): ':' and '\\' are ordinary name
  // characters, as onnx's checker and onnxruntime read them on Linux ("a:b.bin" is a file
  // in the folder, "w\\1.bin" one file, not a subfolder).
  if (location.front() == '/') return refuse("is absolute");
  for (absl::string_view part : absl::StrSplit(location, '/'))
    if (part == "..") return refuse("climbs out with '..'");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  if (ec) return refuse("cannot be resolved");
  fs::path full = fs::weakly_canonical(base / location, ec);
  if (ec) return refuse("cannot be resolved");
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (b != base.end()) return refuse("leads out of the folder through a symbolic link");
  return full.string();
}

}  // namespace onnxsurgeon
