// libFuzzer target: bytes -> load -> a pass list chosen by the input -> validate -> save ->
// reload. Input layout (fuzz/pipeline_input.h): one byte N (passes = N % 4 + 1), N pass
// indices into the pass table, then a serialized ModelProto. Every stage may refuse with a
// Status; a crash, a sanitizer report, or a saved model that does not load again is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "fuzz/pipeline_input.h"
#include "passes/registry.h"

using namespace onnxsurgeon;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  passes::InstallBuiltinPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto input = fuzz::SplitPipelineInput(data, size);
  if (!input) return 0;
  LoadOptions load;
  load.load_external_data = false;
  auto model = LoadModelFromBytes(std::move(input->model), load);
  if (!model.ok()) return 0;
  PassManagerOptions options;
  options.validate = OutputValidation::kStructural;
  auto reports = RunPipeline(**model, input->pipeline, options);
  if (!reports.ok()) return 0;
  auto bytes = SaveModelToBytes(**model);
  if (!bytes.ok()) return 0;
  auto again = LoadModelFromBytes(*std::move(bytes), load);
  if (!again.ok()) __builtin_trap();  // the pipeline's output passed validation yet does not load
  return 0;
}
