// Greedy-driver throughput on synthetic graphs of 1e3 .. 1e6 nodes.
//
// The graph is a chain X -> ... -> Y of blocks [Relu, Mul(., one), Neg, Neg, Add(., zero)]:
// the rules (mul-by-one, double-neg, add-zero, and two that never match) rewrite 4 of
// every 5 nodes. Reported: driver time per initial node, which must stay flat as the
// graph grows (the matcher indexes rules by root op and never rescans the graph).
//
//   build/bench/driver_bench [max_nodes]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/io/importer.h"
#include "core/ir/model.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"

using namespace onnxsurgeon;
using pattern::Match;
using pattern::Pattern;

namespace {

// The chain as a loaded model: a ModelProto through the importer, as a file would come in
// (outside core/ir, graphs change only through a Rewriter; core/ir/mutation_key.h).
std::unique_ptr<Model> MakeChain(int64_t nodes) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(18);
  onnx::GraphProto* g = proto.mutable_graph();
  g->set_name("chain");
  auto* x = g->add_input();
  x->set_name("X");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto scalar = [&](const char* name, float v) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(&v), 4));
  };
  scalar("one", 1.0f);
  scalar("zero", 0.0f);
  std::string cur = "X";
  for (int64_t i = 0; i < nodes; ++i) {
    static const char* const kOps[] = {"Relu", "Mul", "Neg", "Neg", "Add"};
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(kOps[i % 5]);
    n->set_name("n" + std::to_string(i));
    n->add_input(cur);
    if (i % 5 == 1) n->add_input("one");
    if (i % 5 == 4) n->add_input("zero");
    cur = "v" + std::to_string(i);
    n->add_output(cur);
  }
  g->add_output()->set_name(cur);
  auto model = ImportModel(std::move(proto));
  if (!model.ok()) {
    std::fprintf(stderr, "chain import failed: %s\n", std::string(model.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*model);
}

std::unique_ptr<RewriteRule> Identity(const char* name, const char* op, double constant) {
  Pattern p(name);
  auto x = p.Any("x");
  auto root = p.Op(op, {x, p.ScalarNear("c", constant)});
  root.Commutative();
  int id = root.id();
  return std::make_unique<PatternRule<>>(
      name, std::move(p), id,
      [](const Match& m, Rewriter&) -> StatusOr<std::vector<Value*>> { return std::vector<Value*>{m.value("x")}; });
}

std::unique_ptr<RewriteRule> DoubleNeg() {
  Pattern p("double-neg");
  auto x = p.Any("x");
  int root = p.Op("Neg", {p.Op("Neg", {x})}).id();
  return std::make_unique<PatternRule<>>(
      "double-neg", std::move(p), root,
      [](const Match& m, Rewriter&) -> StatusOr<std::vector<Value*>> { return std::vector<Value*>{m.value("x")}; });
}

std::unique_ptr<RewriteRule> NeverMatches(const char* name) {
  // Relu(Sigmoid(x)): Relu is a root candidate everywhere, Sigmoid never appears.
  Pattern p(name);
  int root = p.Op("Relu", {p.Op("Sigmoid", {p.Any("x")})}).id();
  return std::make_unique<PatternRule<>>(
      name, std::move(p), root,
      [](const Match& m, Rewriter&) -> StatusOr<std::vector<Value*>> { return std::vector<Value*>{m.value("x")}; });
}

}  // namespace

int main(int argc, char** argv) {
  int64_t max_nodes = argc > 1 ? std::atoll(argv[1]) : 1000000;
  std::vector<std::unique_ptr<RewriteRule>> owned;
  owned.push_back(Identity("mul-by-one", "Mul", 1.0));
  owned.push_back(Identity("add-zero", "Add", 0.0));
  owned.push_back(DoubleNeg());
  owned.push_back(NeverMatches("relu-sigmoid-a"));
  owned.push_back(NeverMatches("relu-sigmoid-b"));
  std::vector<const RewriteRule*> rules;
  for (auto& r : owned) rules.push_back(r.get());

  std::printf("| nodes | rewrites | nodes after | driver time (s) | ns per node |\n|---:|---:|---:|---:|---:|\n");
  for (int64_t n = 1000; n <= max_nodes; n *= 10) {
    auto model = MakeChain(n);
    auto start = std::chrono::steady_clock::now();
    auto counts = ApplyRulesGreedily(*model, rules);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!counts.ok()) {
      std::fprintf(stderr, "driver failed: %s\n", std::string(counts.status().message()).c_str());
      return 1;
    }
    int64_t rewrites = 0;
    for (auto& [_, c] : *counts) rewrites += c;
    std::printf("| %lld | %lld | %zu | %.4f | %.0f |\n", static_cast<long long>(n), static_cast<long long>(rewrites),
                model->graph().num_nodes(), s, s * 1e9 / static_cast<double>(n));
    if (model->graph().num_nodes() != static_cast<size_t>(n / 5)) {
      std::fprintf(stderr, "unexpected result: %zu nodes left, wanted %lld\n", model->graph().num_nodes(),
                   static_cast<long long>(n / 5));
      return 1;
    }
  }
  return 0;
}
