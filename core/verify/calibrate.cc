#include "core/verify/calibrate.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "core/util/subprocess.h"
#include "core/verify/calibrate_script.h"
#include "core/verify/python_helper.h"

namespace onnxsurgeon {

StatusOr<int64_t> MeasureRanges(const std::string& model_path, const std::vector<std::string>& inputs,
                                const std::string& ranges_path) {
  namespace fs = std::filesystem;
  TempDir dir("onnxsurgeon-calibrate");
  Json config;
  config["model"] = fs::absolute(model_path).string();
  std::vector<std::string> absolute;
  for (const auto& p : inputs) absolute.push_back(fs::absolute(p).string());
  config["inputs"] = Json(absolute);
  OS_ASSIGN_OR_RETURN(HelperRun run, RunPythonHelper("--calibrate", "calibrate.py", kCalibrateScript, dir, config));
  if (run.result.contains("error"))
    return absl::InvalidArgumentError(absl::StrCat("--calibrate: ", run.result["error"].get<std::string>()));
  std::ofstream out(ranges_path);
  out << "# MIN MAX NAME: measured by --calibrate (onnxruntime), read by convert-float16(ranges=...)\n";
  int64_t n = 0;
  for (const Json& r : run.result.value("ranges", Json::array())) {
    out.precision(17);
    out << r[1].get<double>() << " " << r[2].get<double>() << " " << r[0].get<std::string>() << "\n";
    ++n;
  }
  if (!out) return absl::InternalError(absl::StrCat("--calibrate: cannot write ", ranges_path));
  return n;
}

}  // namespace onnxsurgeon
