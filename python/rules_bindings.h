// The rewrite-rule bindings: Pattern, Match, Rewriter, rules written in Python and the
// passes they are registered as (rules_bindings.cc).
#pragma once

#include <pybind11/pybind11.h>

namespace onnxsurgeon::bindings {

void BindRules(pybind11::module_& m);

}  // namespace onnxsurgeon::bindings
