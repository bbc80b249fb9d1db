// Why a pooling window that covers the whole input is a global pool: see pool_to_global.cc.
#include "passes/backend_forms/whole_input_pool.h"

#include "absl/strings/str_cat.h"

namespace onnxsurgeon::passes {
namespace {

std::vector<int64_t> Ints(const Node& n, const char* name) {
  const Attribute* a = n.FindAttribute(name);
  if (!a) return {};
  return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
}

std::string StringAttr(const Node& n, const char* name) {
  const Attribute* a = n.FindAttribute(name);
  return a ? a->proto().s() : "";
}

int64_t IntAttr(const Node& n, const char* name, int64_t fallback) {
  const Attribute* a = n.FindAttribute(name);
  return a ? a->proto().i() : fallback;
}

}  // namespace

std::optional<std::string> KernelExceedsInput(const Node& n, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> kernel = Ints(n, "kernel_shape"), pads = Ints(n, "pads"), dilations = Ints(n, "dilations");
  const size_t spatial = kernel.size();
  if (spatial == 0 || dims.size() != spatial + 2) return std::nullopt;
  if (!pads.empty() && pads.size() != 2 * spatial) return std::nullopt;
  if (!dilations.empty() && dilations.size() != spatial) return std::nullopt;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t dim = dims[i + 2];
    if (dim < 0) continue;
    const int64_t padded = dim + (pads.empty() ? 0 : pads[i] + pads[i + spatial]);
    const int64_t extent = (kernel[i] - 1) * (dilations.empty() ? 1 : dilations[i]) + 1;
    if (extent > padded) return absl::StrCat("kernel ", extent, " over ", padded, " on axis ", i + 2);
  }
  return std::nullopt;
}

std::string WhyNotWholeInputAveragePool(const Node& n, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> kernel = Ints(n, "kernel_shape"), pads = Ints(n, "pads"), dilations = Ints(n, "dilations"),
                             strides = Ints(n, "strides");
  const size_t spatial = kernel.size();
  if (spatial == 0) return "it has no kernel_shape";
  if (dims.size() != spatial + 2) return "its input's rank is unknown or does not match kernel_shape";
  const std::string auto_pad = StringAttr(n, "auto_pad");
  if (!auto_pad.empty() && auto_pad != "NOTSET") return absl::StrCat("auto_pad is ", auto_pad);
  for (int64_t p : pads)
    if (p != 0) return "it has pads";
  for (int64_t d : dilations)
    if (d != 1) return "it has dilations";
  if (!strides.empty() && strides.size() != spatial) return "strides do not match kernel_shape";
  const bool ceil_mode = IntAttr(n, "ceil_mode", 0) != 0;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t dim = dims[i + 2], k = kernel[i], stride = strides.empty() ? 1 : strides[i];
    if (dim < 0) return absl::StrCat("input dim ", i + 2, " is not static");
    if (k < dim) return absl::StrCat("the kernel (", k, ") is smaller than the input (", dim, ") on axis ", i + 2);
    if (k == dim) continue;
    if (!ceil_mode) return absl::StrCat("the kernel (", k, ") exceeds the input (", dim, ") without ceil_mode");
    if (k - dim >= stride)
      return absl::StrCat("kernel ", k, " - input ", dim, " is not below the stride ", stride, " on axis ", i + 2);
  }
  return "";
}

}  // namespace onnxsurgeon::passes
