#include "core/io/external_location.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

StatusOr<ExternalRef> ParseExternalRef(const onnx::TensorProto& meta, const std::string& name) {
  ExternalRef ref;
  for (const auto& kv : meta.external_data()) {
    char* end = nullptr;
    if (kv.key() == "location") {
      ref.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      errno = 0;
      unsigned long long v = std::strtoull(kv.value().c_str(), &end, 10);
      // strtoull takes "-1" (as 2^64-1) and leading blanks: only plain digits are a size.
      bool digits = !kv.value().empty() && kv.value().find_first_not_of("0123456789") == std::string::npos;
      if (!digits || *end != '\0' || errno != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' has a malformed external-data ", kv.key(), " '", kv.value(), "'"));
      }
      if (kv.key() == "offset") ref.offset = v;
      else ref.length = v;
    }
  }
  if (ref.location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is external but names no location"));
  }
  return ref;
}

}  // namespace onnxsurgeon
