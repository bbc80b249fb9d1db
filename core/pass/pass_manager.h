// PassManager: runs a parsed pipeline over a model and reports what each pass did.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/inspect/quantization.h"
#include "core/ir/model.h"
#include "core/pass/pass.h"
#include "core/pass/pipeline.h"
#include "core/pass/validate.h"

namespace onnxsurgeon {

struct PassRunReport {
  std::string name;
  PassResult result;
  double seconds = 0;
  std::map<std::string, int64_t> histogram_before;
  std::map<std::string, int64_t> histogram_after;
  // Q/DQ and QOperator nodes, quantized weight bytes (all zero for a float model).
  QuantizationStats quantization_before, quantization_after;
};

struct PassManagerOptions {
  bool verify_each = false;                       // onnx checker after every pass
  std::string print_after;                        // pass name whose result is printed as ONNX text
  std::function<void(const std::string&)> print;  // where printed text goes
  PassContext context;                            // handed to every pass
  // Progress hooks (the CLI's progress line and summary): before and after each pass.
  std::function<void(const PipelineItem&)> on_pass_begin;
  std::function<void(const PassRunReport&)> on_pass_end;
  // What the output must pass when the pipeline ends (core/pass/validate.h). A check the
  // output fails counts only if the input passed it; the error then names the check.
  OutputValidation validate = OutputValidation::kStructural;
  // kFull: whether the input passed onnx's full checker, asked only when the output fails
  // it (the CLI reloads the input file). Unset: the input is checked before the passes run.
  std::function<Status()> check_input;
};

// Op histogram ("domain::op", plain op for ai.onnx) of the main graph and its subgraphs.
std::map<std::string, int64_t> OpHistogram(const Model& model);

// Given a model and a pipeline. Execute runs each pass in order (stopping at the first
// error, which names the pass), then validates the output (options.validate).
// Result one report per pass, or the first error.
StatusOr<std::vector<PassRunReport>> RunPipeline(Model& model, const std::vector<PipelineItem>& pipeline,
                                                 const PassManagerOptions& options = {});

}  // namespace onnxsurgeon
