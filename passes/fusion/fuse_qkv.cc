// fuse-qkv: projections of one input fused into one MatMul and a Split, as onnx-simplifier
// does on BERT/DeiT attention. Opt-in (not a simplify step): it changes the ops a runtime
// sees, and onnxruntime's own attention fusion, which looks for three MatMul + Add
// branches, no longer fires (docs/benchmarks.md has the measured figures).
//
// shared-input-matmuls: n >= 2 nodes MatMul(x, W_i), the same x, each W_i a rank-2
// constant [K, N_i] of one element type read by that MatMul only, become
//   y = MatMul(x, Concat(W_1..W_n, axis 1))  y_1..y_n = Split(y, axis -1, [N_1..N_n])
// and when every branch is Add(MatMul(x, W_i), b_i) with b_i a constant of N_i (or one)
// elements and the MatMul read only by its Add, the biases are concatenated too:
//   y = Add(MatMul(x, Concat(W_i)), Concat(b_i))  y_1..y_n = Split(y, ...)
// x @ [W_1 .. W_n] = [x @ W_1 .. x @ W_n] column block by column block, and each column's
// dot product is the same, so the result is the original up to the kernel's accumulation
// order. Fused only when it leaves fewer nodes: 2n nodes become 3 with the biases, n become
// 2 without (so two bias-less MatMuls stay). A branch is left out, with its reason, when its
// weight has another reader (the concatenation would copy the weight while the original
// stays), is not a rank-2 constant (batched [B,K,N] weights broadcast differently), or
// has another element type or K than the first; a branch output that is a graph output
// keeps its name on the Split's output.
//   Before:  q = Add(MatMul(x, Wq), bq)  k = Add(MatMul(x, Wk), bk)  v = Add(MatMul(x, Wv), bv)
//   After:   qkv = Add(MatMul(x, Wqkv), bqkv)   q, k, v = Split(qkv, [Nq, Nk, Nv], axis=-1)
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// One projection of x: the MatMul, its weight, and its bias Add when it has one.
struct Branch {
  Node* matmul = nullptr;
  ConstantData weight;  // [K, N]
  Node* add = nullptr;  // Add(matmul, b), null when there is none (or it cannot be fused)
  ConstantData bias;    // N elements, or one
  Value* out() const { return add ? add->output(0) : matmul->output(0); }
  int64_t n() const { return weight.dims[1]; }
};

// Why `mm` cannot be a branch reading `x` (empty when it can); fills `b`.
std::string BranchOf(Node* mm, const Value* x, const Graph* graph, Branch& b) {
  if (!mm->Is("MatMul") || mm->graph() != graph || mm->num_inputs() != 2 || mm->input(0) != x)
    return "it is not MatMul(x, W) on the shared x in this graph";
  Value* w = mm->input(1);
  auto c = GetConstant(w);
  if (!c) return "its weight is not a constant";
  if (c->dims.size() != 2) return absl::StrCat("its weight is rank ", c->dims.size(), ", not a rank-2 [K,N] matrix");
  if (c->num_elements() == 0 || c->raw.size() % static_cast<size_t>(c->num_elements()) != 0)
    return "its weight has no fixed-size elements";
  if (w->uses().size() != 1 || w->IsGraphOutput())
    return "its weight has another reader (the concatenation would copy it while the original stays)";
  b.matmul = mm;
  b.weight = *std::move(c);
  return "";
}

// The bias Add over `b.matmul`, when the branch has one that can be concatenated.
void FindBias(Branch& b) {
  Value* p = b.matmul->output(0);
  if (p->uses().size() != 1 || p->IsGraphOutput()) return;
  Node* add = p->uses()[0].node;
  if (!add->Is("Add") || add->graph() != b.matmul->graph() || add->num_inputs() != 2) return;
  Value* other = add->input(add->input(0) == p ? 1 : 0);
  if (other == p) return;
  auto c = GetConstant(other);
  // Rank 0 or 1 only: a [1,N] bias would raise the rank of a rank-1 product.
  if (!c || c->data_type != b.weight.data_type || c->dims.size() > 1) return;
  if (c->num_elements() != 1 && c->num_elements() != b.n()) return;
  b.add = add;
  b.bias = *std::move(c);
}

Tensor MakeTensor(int32_t type, std::vector<int64_t> dims, std::string bytes) {
  Tensor t;
  t.mutable_meta().set_data_type(type);
  for (int64_t d : dims) t.mutable_meta().add_dims(d);
  t.SetRawBytes(std::move(bytes));
  return t;
}

// [K, sum N_i]: row k is the rows k of every W_i side by side.
Tensor ConcatWeights(const std::vector<Branch>& branches) {
  const ConstantData& first = branches[0].weight;
  const int64_t k = first.dims[0];
  const size_t elem = first.raw.size() / static_cast<size_t>(first.num_elements());
  int64_t total = 0;
  for (const Branch& b : branches) total += b.n();
  std::string bytes;
  bytes.reserve(static_cast<size_t>(k * total) * elem);
  for (int64_t r = 0; r < k; ++r) {
    for (const Branch& b : branches) {
      const size_t row = static_cast<size_t>(b.n()) * elem;
      bytes.append(b.weight.raw.substr(static_cast<size_t>(r) * row, row));
    }
  }
  return MakeTensor(first.data_type, {k, total}, std::move(bytes));
}

// [sum N_i]: each bias, a single element repeated N_i times.
Tensor ConcatBiases(const std::vector<Branch>& branches) {
  const size_t elem = branches[0].bias.raw.size() / static_cast<size_t>(branches[0].bias.num_elements());
  std::string bytes;
  int64_t total = 0;
  for (const Branch& b : branches) {
    total += b.n();
    if (b.bias.num_elements() == b.n()) {
      bytes.append(b.bias.raw);
    } else {
      for (int64_t i = 0; i < b.n(); ++i) bytes.append(b.bias.raw.substr(0, elem));
    }
  }
  return MakeTensor(branches[0].bias.data_type, {total}, std::move(bytes));
}

// The node's name, or its first output's for an unnamed node.
std::string Label(const Node* n) { return n->name().empty() && n->output(0) ? n->output(0)->name() : n->name(); }

void CarryType(const Value* from, Value* to) {
  if (from->has_type() && !to->has_type()) *to->mutable_info()->mutable_type() = *from->type();
}

// The branches to fuse, in x's use order, and whether their biases fuse too.
struct QkvPlan {
  Value* x = nullptr;
  std::vector<Branch> branches;
  bool with_bias = false;
};

class SharedInputMatMuls : public NodeRule<QkvPlan> {
 public:
  SharedInputMatMuls() : NodeRule("fuse-qkv/shared-input-matmuls", "MatMul") {}

 protected:
  Verdict<QkvPlan> Check(Node* root, RewriteFacts&) const override {
    Value* x = root->input(0);
    if (!x) return Refuse("the MatMul has no first input");
    Branch own;
    if (std::string miss = BranchOf(root, x, root->graph(), own); !miss.empty()) return Refuse("this MatMul: " + miss);
    QkvPlan plan{x, {}, false};
    std::vector<std::string> left_out;
    for (const Use& use : x->uses()) {
      Node* mm = use.node;
      if (!mm->Is("MatMul") || use.input_index != 0) continue;
      Branch b;
      std::string miss = BranchOf(mm, x, root->graph(), b);
      if (miss.empty() && (b.weight.data_type != own.weight.data_type || b.weight.dims[0] != own.weight.dims[0]))
        miss = "its weight's element type or K differs from this MatMul's";
      if (!miss.empty()) {
        left_out.push_back(absl::StrCat("'", Label(mm), "' (", miss, ")"));
        continue;
      }
      plan.branches.push_back(std::move(b));
    }
    for (Branch& b : plan.branches) FindBias(b);
    plan.with_bias = std::all_of(plan.branches.begin(), plan.branches.end(), [](const Branch& b) { return b.add; });
    if (!plan.with_bias)
      for (Branch& b : plan.branches) b.add = nullptr;
    const size_t n = plan.branches.size();
    const size_t before = plan.with_bias ? 2 * n : n, after = plan.with_bias ? 3 : 2;
    if (before <= after) {
      std::string reason = absl::StrCat(n, n == 1 ? " MatMul reads" : " MatMuls read", " x with a fusable weight",
                                        plan.with_bias ? "" : (n > 1 ? ", not all with a constant bias Add" : ""),
                                        ": fusing leaves no fewer nodes");
      if (!left_out.empty()) absl::StrAppend(&reason, "; left out: ", absl::StrJoin(left_out, ", "));
      return Refuse(std::move(reason));
    }
    return plan;
  }

  Status Replace(Node* root, QkvPlan plan, Rewriter& rw) const override {
    const std::vector<Branch>& branches = plan.branches;
    const size_t n = branches.size();
    // New nodes go right after x is defined, so they precede every branch's readers
    // (the pass sorts each graph first).
    Node* producer = plan.x->producer();
    Node* position = producer && producer->graph() == root->graph() ? producer->next() : root->graph()->first_node();
    rw.SetInsertionPoint(position);
    OS_ASSIGN_OR_RETURN(Value * w, rw.Constant(ConcatWeights(branches), "weight"));
    Value* y = rw.Op("MatMul", {plan.x, w});
    if (plan.with_bias) {
      OS_ASSIGN_OR_RETURN(Value * b, rw.Constant(ConcatBiases(branches), "bias"));
      y = rw.Op("Add", {y, b});
    }
    std::vector<int64_t> sizes;
    for (const Branch& b : branches) sizes.push_back(b.n());
    std::vector<onnx::AttributeProto> attributes = {Rewriter::AttrInt("axis", -1)};
    std::vector<Value*> inputs = {y};
    if (root->graph()->OpsetVersion("") >= 13) {
      inputs.push_back(rw.Int64s(sizes));
    } else {
      attributes.push_back(Rewriter::AttrInts("split", sizes));
    }
    Node* split = rw.Create("Split", std::move(inputs), std::move(attributes), static_cast<int>(n));
    std::vector<Node*> dead;
    for (size_t i = 0; i < n; ++i) {
      const Branch& b = branches[i];
      CarryType(b.out(), split->output(i));
      for (Value* c :
           {b.matmul->input(1), b.add ? b.add->input(b.add->input(0) == b.matmul->output(0) ? 1 : 0) : nullptr})
        if (c && c->producer()) dead.push_back(c->producer());  // Constant nodes
      OS_RETURN_IF_ERROR(rw.ReplaceNode(b.add ? b.add : b.matmul, {split->output(i)}));
      if (b.add) OS_RETURN_IF_ERROR(rw.EraseNode(b.matmul));
    }
    rw.EraseDead(std::move(dead));
    return absl::OkStatus();
  }
};

class FuseQkvPass : public PatternPass {
 public:
  FuseQkvPass() { AddRule(std::make_unique<SharedInputMatMuls>()); }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    // The fused nodes go right after x's definition: that precedes the readers only in
    // topological order.
    int64_t reordered = 0;
    for (Graph* g : model.AllGraphs()) {
      if (g->IsTopologicallySorted()) continue;
      OS_RETURN_IF_ERROR(g->TopologicalSort());
      ++reordered;
    }
    OS_ASSIGN_OR_RETURN(PassResult result, PatternPass::Run(model, context));
    result.Count("graphs-reordered", reordered);
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseQkvPass(const PassOptions&) { return std::make_unique<FuseQkvPass>(); }

}  // namespace onnxsurgeon::passes
