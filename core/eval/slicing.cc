#include "core/eval/slicing.h"

#include <algorithm>

namespace onnxsurgeon {

std::optional<SliceAxis> ClampSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step == 0) return std::nullopt;
  if (dim == 0) return SliceAxis{};  // also keeps the clamps below from getting an empty range
  if (start < 0) start = start < -dim ? 0 : start + dim;
  if (end < 0) end = end < -dim ? -1 : end + dim;
  SliceAxis a;
  a.start = std::clamp<int64_t>(start, 0, step > 0 ? dim : dim - 1);
  a.end = std::clamp<int64_t>(end, step > 0 ? 0 : -1, step > 0 ? dim : dim - 1);
  // ceil(distance / |step|), without overflow for any step (INT64_MIN included).
  const int64_t distance = step > 0 ? a.end - a.start : a.start - a.end;
  const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  a.count = distance > 0 ? static_cast<int64_t>((static_cast<uint64_t>(distance) - 1) / magnitude + 1) : 0;
  return a;
}

std::pair<int64_t, int64_t> ShapeRange(int64_t rank, int64_t start, int64_t end) {
  auto clamp = [rank](int64_t x) { return std::clamp(x < 0 ? x + rank : x, int64_t{0}, rank); };
  const int64_t first = clamp(start);
  return {first, std::max(first, clamp(end))};
}

}  // namespace onnxsurgeon
