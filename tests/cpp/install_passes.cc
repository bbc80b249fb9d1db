// Installs the built-in pass table before any test runs: core does not link the passes
// library (passes/registry.h), so every program, this one included, installs it at start.
#include "gtest/gtest.h"
#include "passes/registry.h"

namespace {

class BuiltinPasses : public testing::Environment {
 public:
  void SetUp() override { onnxsurgeon::passes::InstallBuiltinPasses(); }
};

const testing::Environment* const kInstalled = testing::AddGlobalTestEnvironment(new BuiltinPasses);

}  // namespace
