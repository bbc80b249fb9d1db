// The pipeline fuzzer's input layout, shared with the seed-corpus writer (make_seeds.py):
//   byte 0          N: the pipeline has N % 4 + 1 passes
//   bytes 1..k      one byte per pass: an index into the pass table (modulo its size)
//   the rest        a serialized ModelProto
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/pass/pass.h"
#include "core/pass/pipeline.h"

namespace onnxsurgeon::fuzz {

struct PipelineInput {
  std::vector<PipelineItem> pipeline;
  std::string model;
};

inline std::optional<PipelineInput> SplitPipelineInput(const uint8_t* data, size_t size) {
  if (size < 1) return std::nullopt;
  const size_t count = data[0] % 4 + 1;
  if (size < 1 + count) return std::nullopt;
  const auto& table = AllPasses();
  PipelineInput out;
  for (size_t i = 0; i < count; ++i) {
    PipelineItem item;
    item.info = &table[data[1 + i] % table.size()];
    out.pipeline.push_back(std::move(item));
  }
  out.model.assign(reinterpret_cast<const char*>(data + 1 + count), size - 1 - count);
  return out;
}

}  // namespace onnxsurgeon::fuzz
