// libFuzzer target: bytes -> Model. Whatever the bytes, loading either succeeds or returns
// a Status; a loaded model must export, and its export must load again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io/model_io.h"

using namespace onnxsurgeon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LoadOptions options;
  options.load_external_data = false;  // the fuzz input cannot name files safely
  auto model = LoadModelFromBytes(std::string(reinterpret_cast<const char*>(data), size), options);
  if (!model.ok()) return 0;
  auto bytes = SaveModelToBytes(**model);
  if (!bytes.ok()) return 0;  // e.g. a tensor still referencing external data
  auto again = LoadModelFromBytes(*std::move(bytes), options);
  if (!again.ok()) __builtin_trap();  // what we wrote, we must read back
  return 0;
}
