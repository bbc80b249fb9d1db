// dedupe-initializers: merges byte-identical initializers (same data type, same dims, same
// bytes) into one; readers of the duplicates read the first one.
//
// Bytes are compared by a sampled hash first (the first, middle and last 4 KiB: weights
// that differ almost always differ there) and then in full, straight from the tensors'
// views (mapped model file or external-data file), so nothing is loaded twice and a model
// of distinct weights is never read whole: on a 500 MB model of thirty 16 MiB weights of
// one shape, hashing every byte took 336 ms of a 0.34 s simplify, paging in the file. Never merged
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
#include <string_view>
#include <tuple>

#include "absl/hash/hash.h"
#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct Candidate {
  Value* value;
  std::string_view bytes;
};

// The tensor's elements in raw layout: a view where it has one, else a copy kept in `owned`.
std::optional<std::string_view> BytesOf(const Tensor& t, std::vector<std::unique_ptr<std::string>>& owned) {
  if (t.has_raw_bytes()) return t.raw_bytes();
  if (!t.CanBeRaw()) return std::nullopt;
  auto copy = t.RawBytesCopy();
  if (!copy.ok()) return std::nullopt;
  owned.push_back(std::make_unique<std::string>(std::move(*copy)));
  return std::string_view(*owned.back());
}

// A hash of the bytes at the start, middle and end (all of them when small): equal bytes
// always hash equal; the full comparison decides.
size_t SampledHash(std::string_view bytes) {
  constexpr size_t kWindow = 4096;
  if (bytes.size() <= 3 * kWindow)
    return absl::Hash<absl::string_view>{}(absl::string_view(bytes.data(), bytes.size()));
  auto window = [&](size_t at) { return absl::string_view(bytes.data() + at, kWindow); };
  return absl::HashOf(window(0), window(bytes.size() / 2 - kWindow / 2), window(bytes.size() - kWindow));
}

Status DedupeGraph(Graph& g, PassResult& result) {
  using Key = std::tuple<int32_t, std::vector<int64_t>, size_t, size_t>;  // type, dims, size, sampled hash
  std::map<Key, std::vector<Candidate>> survivors;
  std::vector<std::unique_ptr<std::string>> owned;
  std::vector<std::pair<Value*, Value*>> merges;  // duplicate, survivor
  for (Value* v : g.initializers()) {
    if (v->IsGraphInput()) continue;
    const Tensor& t = *v->initializer();
    if (t.meta().data_type() == onnx::TensorProto::STRING) continue;
    auto bytes = BytesOf(t, owned);
    if (!bytes) continue;
    const auto& dims = t.meta().dims();
    Key key{t.meta().data_type(), std::vector<int64_t>(dims.begin(), dims.end()), bytes->size(), SampledHash(*bytes)};
    std::vector<Candidate>& same_key = survivors[key];
    Value* survivor = nullptr;
    if (!v->IsGraphOutput()) {
      for (const Candidate& c : same_key)
        if (c.bytes == *bytes) survivor = c.value;
    }
    if (survivor) {
      merges.emplace_back(v, survivor);
    } else {
      same_key.push_back({v, *bytes});
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
