// The backend runners (tests/backends/runners: the file protocol of _protocol.py), embedded
// by core/CMakeLists.txt so --backend-check and compare --backend work from an installed
// wheel too (core/verify/backend_check.h).
#pragma once

#include <utility>

#include "core/verify/runner_ncnn_script.h"
#include "core/verify/runner_nncase_k210_script.h"
#include "core/verify/runner_openvino_script.h"
#include "core/verify/runner_ort_script.h"
#include "core/verify/runner_protocol_script.h"
#include "core/verify/runner_rknn2_script.h"
#include "core/verify/runner_tflite_script.h"

namespace onnxsurgeon {

inline constexpr const char* kBackendRunnerProtocol = kRunnerProtocolScript;
inline constexpr std::pair<const char*, const char*> kBackendRunners[] = {
    {"ort", kRunnerOrtScript},     {"openvino", kRunnerOpenvinoScript}, {"nncase-k210", kRunnerNncaseK210Script},
    {"rknn2", kRunnerRknn2Script}, {"tflite", kRunnerTfliteScript},     {"ncnn", kRunnerNcnnScript},
};

}  // namespace onnxsurgeon
