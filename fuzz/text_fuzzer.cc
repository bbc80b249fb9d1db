// libFuzzer target: the ONNX text format (onnx's parser, then our importer). Whatever the
// text, parsing returns a model or a Status; a parsed model prints and exports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/interop/onnx_interop.h"
#include "core/io/model_io.h"

using namespace onnxsurgeon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = ParseModelText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!model.ok()) return 0;
  (void)PrintModelText(**model);
  (void)SaveModelToBytes(**model);
  return 0;
}
