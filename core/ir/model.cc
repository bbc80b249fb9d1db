#include "core/ir/model.h"

#include "absl/strings/str_cat.h"

namespace onnxsurgeon {

Function::Function(Model* model) : body_(std::make_unique<Graph>(model, GraphKind::kFunctionBody)) {
  body_->function_ = this;
}

int64_t Function::OpsetVersion(std::string_view domain) const {
  domain = CanonicalDomain(domain);
  for (const auto& op : proto_.opset_import())
    if (CanonicalDomain(op.domain()) == domain) return op.version();
  return -1;
}

Model::Model() : graph_(std::make_unique<Graph>(this, GraphKind::kMain)) {}
Model::~Model() = default;

Function* Model::FindFunction(std::string_view domain, std::string_view name, std::string_view overload) const {
  for (const auto& f : functions_)
    if (f->domain() == domain && f->name() == name && f->overload() == overload) return f.get();
  return nullptr;
}

int64_t Model::OpsetVersion(std::string_view domain) const {
  domain = CanonicalDomain(domain);
  for (const auto& op : proto_.opset_import())
    if (CanonicalDomain(op.domain()) == domain) return op.version();
  return -1;
}

void Model::SetOpsetVersion(std::string_view domain, int64_t version) {
  for (auto& op : *proto_.mutable_opset_import()) {
    if (CanonicalDomain(op.domain()) == CanonicalDomain(domain)) {
      op.set_version(version);
      return;
    }
  }
  auto* op = proto_.add_opset_import();
  op->set_domain(std::string(domain));
  op->set_version(version);
}

void Model::ReserveName(std::string_view name) { used_names_.emplace(name); }

std::string Model::UniqueName(std::string_view base) {
  std::string b(base.empty() ? "v" : base);
  if (used_names_.insert(b).second) return b;
  int64_t& counter = name_counters_[b];
  std::string candidate;
  do {
    candidate = absl::StrCat(b, "_", ++counter);
  } while (used_names_.contains(candidate));
  used_names_.insert(candidate);
  return candidate;
}

namespace {
void CollectGraphs(Graph* g, std::vector<Graph*>& out) {
  out.push_back(g);
  for (Node* n : g->nodes())
    for (Graph* sub : n->subgraphs()) CollectGraphs(sub, out);
}
}  // namespace

std::vector<Graph*> Model::AllGraphs() const {
  std::vector<Graph*> out;
  CollectGraphs(graph_.get(), out);
  for (const auto& f : functions_) CollectGraphs(&f->body(), out);
  return out;
}

}  // namespace onnxsurgeon
