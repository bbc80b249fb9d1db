// dedupe-initializers: merges byte-identical initializers (same data type, same dims, same
// bytes) into one; readers of the duplicates read the first one.
//
// Cheap facts are compared first: data type, dims and byte count (no byte read), so a
// tensor of a shape no other has is never read. Then a sampled hash (the first, middle and
// last 4 KiB: weights that differ almost always differ there) and then the bytes in full,
// straight from the tensors' views (mapped model file or external-data file), so nothing is
// loaded twice and a model of distinct weights is never read whole: on a 500 MB model of
// thirty 16 MiB weights of one shape, hashing every byte took 336 ms of a 0.34 s simplify,
// paging in the file. Deferred bytes (Python's ModelProto path) are fetched for the hash
// and dropped (the hash is remembered across simplify's rounds); only a full comparison
// keeps them. Never merged
// away: initializers that are graph inputs (overridable at run time, so not constants) or
// graph outputs (their names are the interface), and string or sparse tensors. Each graph
// (main graph, If/Loop/Scan bodies) is deduplicated on its own: a body's initializers
// merge among themselves.
//
// Options: none.
//
// Before:  <float[2] a = {1, 2}, float[2] b = {1, 2}> { Y = Add(X, a)  Z = Mul(X, b) }
// After:   <float[2] a = {1, 2}> { Y = Add(X, a)  Z = Mul(X, a) }
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// One initializer that could merge: its raw bytes are the tensor's own (raw_bytes(), for a
// tensor that has them) or a conversion of its typed fields kept in `converted`.
struct Entry {
  Value* value;
  std::optional<std::string> converted;
  std::string_view Bytes() const {
    return converted ? std::string_view(*converted) : value->initializer()->raw_bytes();
  }
};

Status DedupeGraph(Graph& g, PassResult& result) {
  // Cheap facts first: type, dims and byte count, known without reading a byte. Only
  // tensors that share them with another are hashed (a deferred tensor's bytes fetched for
  // the hash only), and only equal hashes are compared in full.
  using Shape = std::tuple<int32_t, std::vector<int64_t>, uint64_t>;  // type, dims, size
  std::vector<std::pair<Shape, Entry>> entries;
  std::map<Shape, int> count;
  for (Value* v : g.initializers()) {
    if (v->IsGraphInput()) continue;
    const Tensor& t = *v->initializer();
    if (t.meta().data_type() == onnx::TensorProto::STRING) continue;
    Entry e{v, std::nullopt};
    if (!t.has_raw_bytes()) {
      if (!t.CanBeRaw()) continue;
      auto copy = t.RawBytesCopy();
      if (!copy.ok()) continue;
      e.converted = std::move(*copy);
    }
    const auto& dims = t.meta().dims();
    uint64_t size = e.converted ? e.converted->size() : t.raw_size();
    Shape shape{t.meta().data_type(), std::vector<int64_t>(dims.begin(), dims.end()), size};
    ++count[shape];
    entries.emplace_back(std::move(shape), std::move(e));
  }
  std::map<std::pair<Shape, size_t>, std::vector<const Entry*>> survivors;  // by shape and sampled hash
  std::vector<std::pair<Value*, Value*>> merges;                            // duplicate, survivor
  for (const auto& [shape, e] : entries) {
    if (count[shape] < 2) continue;
    size_t hash = e.converted ? Tensor::SampledHashOf(*e.converted) : e.value->initializer()->SampledHash();
    std::vector<const Entry*>& same_key = survivors[{shape, hash}];
    Value* survivor = nullptr;
    if (!e.value->IsGraphOutput()) {
      for (const Entry* c : same_key)
        if (c->Bytes() == e.Bytes()) survivor = c->value;
    }
    if (survivor) {
      merges.emplace_back(e.value, survivor);
    } else {
      same_key.push_back(&e);
    }
  }
  Rewriter rw;
  rw.SetRule("dedupe-initializers");
  for (auto [duplicate, survivor] : merges) {
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(duplicate, survivor, GraphOutputs::kRefuse));
    OS_RETURN_IF_ERROR(rw.RemoveInitializer(duplicate));
    result.Count("initializers-merged");
  }
  return absl::OkStatus();
}

class DedupeInitializersPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    if (!model.has_graph()) return result;
    for (Graph* g : model.AllGraphs()) OS_RETURN_IF_ERROR(DedupeGraph(*g, result));
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDedupeInitializersPass(const PassOptions&) {
  return std::make_unique<DedupeInitializersPass>();
}

}  // namespace onnxsurgeon::passes
