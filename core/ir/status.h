// Error handling used across onnxsurgeon: absl::Status / absl::StatusOr.
//
// Model problems (bad files, dangling names, cycles) are reported as absl::Status values
// whose message names the file, node and value involved. Callers map them to exit codes.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace onnxsurgeon {

using absl::Status;
using absl::StatusOr;

#define OS_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status _os_status = (expr);      \
    if (!_os_status.ok()) return _os_status; \
  } while (0)

#define OS_CONCAT_INNER(a, b) a##b
#define OS_CONCAT(a, b) OS_CONCAT_INNER(a, b)
#define OS_ASSIGN_OR_RETURN(lhs, expr) OS_ASSIGN_OR_RETURN_IMPL(OS_CONCAT(_os_or_, __LINE__), lhs, expr)
#define OS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

}  // namespace onnxsurgeon
