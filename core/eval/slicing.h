// ONNX's index arithmetic for Slice and Shape(start, end), in one place so that the
// constant-folding kernels (here), the shape rules (core/shape) and resolve-shapes
// agree with each other and with onnxruntime.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

namespace onnxsurgeon {

struct SliceAxis {
  int64_t start = 0;  // the first index taken
  int64_t end = 0;    // where it stops (exclusive; -1 for a negative step to index 0)
  int64_t count = 0;  // how many elements it takes
};

// One axis of size `dim` sliced from `start` to `end` by `step` (not 0), as the Slice
// spec clamps: negative indices count from the end; start into [0, dim] ([0, dim-1] for a
// negative step), end into [0, dim] ([-1, dim-1]); INT64_MIN-safe. Nullopt for step 0.
std::optional<SliceAxis> ClampSlice(int64_t dim, int64_t start, int64_t end, int64_t step);

// The dims [first, last) that Shape(start, end) returns of a rank-`rank` input: negative
// values count from the end, both clamp into [0, rank], and last is never below first.
std::pair<int64_t, int64_t> ShapeRange(int64_t rank, int64_t start, int64_t end);

}  // namespace onnxsurgeon
