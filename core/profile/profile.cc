#include "core/profile/profile.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

// toml++ (Debian libtomlplusplus-dev) in header-only mode, without exceptions: parse
// errors come back as values, like everything else here.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

namespace onnxsurgeon::target {

// targets/*.toml as text, generated at build time (core/profile/embedded_profiles.cc.in).
extern const std::vector<std::pair<std::string, std::string>>& EmbeddedProfileTexts();

namespace {

// Reads one table of the profile, remembering which keys were read so unknown (misspelt)
// keys are an error rather than silently ignored.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string path, const std::string& origin)
      : table_(table), path_(std::move(path)), origin_(origin) {}

  bool present() const { return table_ != nullptr; }

  // "missing", with the keys the table does have: a misspelt key shows up next to it.
  Status Missing(const std::string& key) const {
    std::vector<std::string> keys;
    if (table_)
      for (const auto& [k, v] : *table_) keys.emplace_back(k.str());
    return Error(key,
                 keys.empty() ? "missing" : absl::StrCat("missing (the table has: ", absl::StrJoin(keys, ", "), ")"));
  }

  Status Error(const std::string& key, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", path_.empty() ? "" : path_ + ".", key, ": ", what));
  }

  StatusOr<std::string> String(const std::string& key, bool required, std::string fallback = {}) {
    seen_.insert(key);
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    if (!n) {
      if (required) return Missing(key);
      return fallback;
    }
    auto v = n->value<std::string>();
    if (!v) return Error(key, "wants a string");
    return *v;
  }

  StatusOr<std::vector<std::string>> Strings(const std::string& key) {
    seen_.insert(key);
    std::vector<std::string> out;
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) return Error(key, "wants a list of strings");
    for (const auto& e : *a) {
      auto v = e.value<std::string>();
      if (!v || v->empty() || !e.is_string()) return Error(key, "wants a list of non-empty strings");
      out.push_back(*v);
    }
    return out;
  }

  StatusOr<int64_t> Int(const std::string& key, bool required, int64_t fallback = -1) {
    seen_.insert(key);
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    if (!n) {
      if (required) return Missing(key);
      return fallback;
    }
    auto v = n->value<int64_t>();
    if (!v || !n->is_integer()) return Error(key, "wants an integer");
    return *v;
  }

  StatusOr<bool> Bool(const std::string& key, bool required, bool fallback = false) {
    seen_.insert(key);
    const toml::node* n = table_ ? table_->get(key) : nullptr;
    if (!n) {
      if (required) return Missing(key);
      return fallback;
    }
    if (!n->is_boolean()) return Error(key, "wants true or false");
    return *n->value<bool>();
  }

  // A fact's source: required, non-empty, whenever the table is there.
  StatusOr<std::string> SourceOf() {
    OS_ASSIGN_OR_RETURN(std::string s, String("source", present()));
    if (present() && s.empty()) return Error("source", "must say where the fact comes from");
    return s;
  }

  Status CheckNoUnknownKeys() const {
    if (!table_) return absl::OkStatus();
    for (const auto& [key, value] : *table_) {
      if (!seen_.count(std::string(key.str()))) return Error(std::string(key.str()), "unknown key");
    }
    return absl::OkStatus();
  }

 private:
  const toml::table* table_;
  std::string path_;
  const std::string& origin_;
  std::set<std::string> seen_;
};

StatusOr<Form> ParseForm(TableReader& r) {
  OS_ASSIGN_OR_RETURN(std::string s, r.String("form", r.present(), "op"));
  if (s == "op") return Form::kOp;
  if (s == "decomposed") return Form::kDecomposed;
  return r.Error("form", absl::StrCat("'", s, "' (want op or decomposed)"));
}

// [quantization]: what the runtime does with Q/DQ pairs, sourced.
Status ReadQuantization(TableReader& q, Profile& p) {
  OS_ASSIGN_OR_RETURN(p.qdq, q.String("qdq", true));
  if (p.qdq != "consume" && p.qdq != "dequantize" && p.qdq != "refuse")
    return q.Error("qdq", absl::StrCat("'", p.qdq, "' (want consume, dequantize or refuse)"));
  OS_ASSIGN_OR_RETURN(std::string block_weights, q.String("block_weights", false, "keep"));
  if (block_weights != "keep" && block_weights != "float")
    return q.Error("block_weights", absl::StrCat("'", block_weights, "' (want keep or float)"));
  p.float_block_weights = block_weights == "float";
  OS_ASSIGN_OR_RETURN(p.qdq_source, q.SourceOf());
  return q.CheckNoUnknownKeys();
}

// [ml]: ai.onnx.ml operators, string tensors, sequence and map values, each stated.
Status ReadMl(TableReader& ml, Profile& p) {
  p.ml_stated = true;
  OS_ASSIGN_OR_RETURN(p.ml_ops, ml.Bool("ops", true));
  OS_ASSIGN_OR_RETURN(p.strings, ml.Bool("strings", true));
  OS_ASSIGN_OR_RETURN(p.sequences, ml.Bool("sequences", true));
  OS_ASSIGN_OR_RETURN(p.ml_types_source, ml.SourceOf());
  return ml.CheckNoUnknownKeys();
}

// [outputs] (what graph outputs the runtime keeps) and [plan] (steps the planner runs first).
Status ReadOutputsAndPlan(TableReader& outputs, TableReader& plan, Profile& p) {
  OS_ASSIGN_OR_RETURN(p.output_copies, outputs.Bool("copies", false, true));
  OS_ASSIGN_OR_RETURN(p.output_input_copies, outputs.Bool("input_copies", false, true));
  OS_ASSIGN_OR_RETURN(p.output_constants, outputs.Bool("constants", false, true));
  OS_ASSIGN_OR_RETURN(p.outputs_source, outputs.SourceOf());
  OS_RETURN_IF_ERROR(outputs.CheckNoUnknownKeys());
  OS_ASSIGN_OR_RETURN(p.simplify_first, plan.Bool("simplify_first", false, false));
  OS_ASSIGN_OR_RETURN(p.plan_source, plan.SourceOf());
  return plan.CheckNoUnknownKeys();
}

}  // namespace

std::string FormName(Form f) { return f == Form::kOp ? "op" : "decomposed"; }
std::string ScatterReductionName(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kNative: return "native";
    case ScatterReduction::kLower: return "lower";
    case ScatterReduction::kUnsupported: return "unsupported";
  }
  return "?";
}

StatusOr<Profile> ParseProfile(const std::string& toml_text, const std::string& origin) {
  toml::parse_result parsed = toml::parse(toml_text, origin);
  if (!parsed) {
    const auto& e = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(origin, ":", e.source().begin.line, ":", e.source().begin.column,
                                                   ": ", std::string(e.description())));
  }
  const toml::table& root = parsed.table();
  Profile p;
  p.origin = origin;
  TableReader top(&root, "", origin);
  OS_ASSIGN_OR_RETURN(p.name, top.String("name", true));
  OS_ASSIGN_OR_RETURN(p.title, top.String("title", true));
  OS_ASSIGN_OR_RETURN(p.versions, top.String("versions", true));
  OS_ASSIGN_OR_RETURN(p.notes, top.String("notes", false));
  if (p.name.empty() || p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos) {
    return top.Error("name", absl::StrCat("'", p.name, "' (lower-case letters, digits, '-', '.')"));
  }

  auto sub = [&](const char* key) {
    top.String(key, false).IgnoreError();  // marks the key as known (a table, not a string)
    return TableReader(root.get_as<toml::table>(key), key, origin);
  };

  TableReader opset = sub("opset");
  if (!opset.present()) return top.Error("opset", "missing");
  OS_ASSIGN_OR_RETURN(p.opset_min, opset.Int("min", true));
  OS_ASSIGN_OR_RETURN(p.opset_max, opset.Int("max", true));
  OS_ASSIGN_OR_RETURN(p.ml_opset_max, opset.Int("ml_max", false, -1));
  OS_ASSIGN_OR_RETURN(p.opset_source, opset.SourceOf());
  OS_RETURN_IF_ERROR(opset.CheckNoUnknownKeys());
  if (p.opset_min < 1 || p.opset_max < p.opset_min) return opset.Error("max", "needs 1 <= min <= max");

  TableReader ir = sub("ir");
  OS_ASSIGN_OR_RETURN(p.ir_max, ir.Int("max", ir.present(), -1));
  OS_ASSIGN_OR_RETURN(p.ir_source, ir.SourceOf());
  OS_RETURN_IF_ERROR(ir.CheckNoUnknownKeys());

  TableReader ln = sub("layernorm");
  OS_ASSIGN_OR_RETURN(p.layernorm, ParseForm(ln));
  OS_ASSIGN_OR_RETURN(p.layernorm_source, ln.SourceOf());
  OS_RETURN_IF_ERROR(ln.CheckNoUnknownKeys());

  TableReader gelu = sub("gelu");
  OS_ASSIGN_OR_RETURN(p.gelu, ParseForm(gelu));
  OS_ASSIGN_OR_RETURN(p.gelu_source, gelu.SourceOf());
  OS_RETURN_IF_ERROR(gelu.CheckNoUnknownKeys());

  TableReader erf = sub("erf");
  OS_ASSIGN_OR_RETURN(p.erf, erf.Bool("supported", erf.present(), true));
  OS_ASSIGN_OR_RETURN(p.erf_source, erf.SourceOf());
  OS_RETURN_IF_ERROR(erf.CheckNoUnknownKeys());

  TableReader sr = sub("scatternd_reduction");
  OS_ASSIGN_OR_RETURN(std::string handling, sr.String("handling", sr.present(), "native"));
  if (handling == "native") p.scatternd_reduction = ScatterReduction::kNative;
  else if (handling == "lower") p.scatternd_reduction = ScatterReduction::kLower;
  else if (handling == "unsupported") p.scatternd_reduction = ScatterReduction::kUnsupported;
  else return sr.Error("handling", absl::StrCat("'", handling, "' (want native, lower or unsupported)"));
  OS_ASSIGN_OR_RETURN(p.scatternd_source, sr.SourceOf());
  OS_RETURN_IF_ERROR(sr.CheckNoUnknownKeys());

  TableReader cf = sub("control_flow");
  OS_ASSIGN_OR_RETURN(std::string if_rule, cf.String("if", cf.present(), "any"));
  if (if_rule == "any") p.if_rule = IfRule::kAny;
  else if (if_rule == "constant-condition") p.if_rule = IfRule::kConstantCondition;
  else if (if_rule == "none") p.if_rule = IfRule::kNone;
  else return cf.Error("if", absl::StrCat("'", if_rule, "' (want any, constant-condition or none)"));
  OS_ASSIGN_OR_RETURN(p.loop, cf.Bool("loop", cf.present(), true));
  OS_ASSIGN_OR_RETURN(p.control_flow_source, cf.SourceOf());
  OS_RETURN_IF_ERROR(cf.CheckNoUnknownKeys());

  TableReader shapes = sub("shapes");
  OS_ASSIGN_OR_RETURN(p.static_shapes, shapes.Bool("static", shapes.present(), false));
  OS_ASSIGN_OR_RETURN(p.max_batch, shapes.Int("max_batch", false, 0));
  if (p.max_batch < 0) return shapes.Error("max_batch", "wants 0 (any batch) or a positive batch size");
  OS_ASSIGN_OR_RETURN(p.shapes_source, shapes.SourceOf());
  OS_RETURN_IF_ERROR(shapes.CheckNoUnknownKeys());

  TableReader i64 = sub("int64");
  OS_ASSIGN_OR_RETURN(p.int64, i64.String("support", i64.present(), "full"));
  if (p.int64 != "full" && p.int64 != "cast-to-int32" && p.int64 != "shape-only")
    return i64.Error("support", absl::StrCat("'", p.int64, "' (want full, cast-to-int32 or shape-only)"));
  OS_ASSIGN_OR_RETURN(p.int64_source, i64.SourceOf());
  OS_RETURN_IF_ERROR(i64.CheckNoUnknownKeys());

  TableReader ext = sub("external_data");
  OS_ASSIGN_OR_RETURN(p.external_data, ext.Bool("supported", ext.present(), true));
  OS_ASSIGN_OR_RETURN(p.external_data_source, ext.SourceOf());
  OS_RETURN_IF_ERROR(ext.CheckNoUnknownKeys());

  TableReader vi = sub("value_info");
  OS_ASSIGN_OR_RETURN(p.value_info_everywhere, vi.Bool("everywhere", vi.present(), false));
  OS_ASSIGN_OR_RETURN(p.value_info_source, vi.SourceOf());
  OS_RETURN_IF_ERROR(vi.CheckNoUnknownKeys());

  TableReader quant = sub("quantization");
  if (quant.present()) OS_RETURN_IF_ERROR(ReadQuantization(quant, p));

  TableReader ml = sub("ml");  // every built-in profile states it (tests/python/test_ml_models.py)
  if (ml.present()) OS_RETURN_IF_ERROR(ReadMl(ml, p));

  TableReader custom = sub("custom");
  if (!custom.present()) return top.Error("custom", "missing (say whether custom domains and local functions load)");
  OS_ASSIGN_OR_RETURN(p.custom_domains, custom.Bool("domains", true));
  OS_ASSIGN_OR_RETURN(p.local_functions, custom.Bool("functions", true));
  OS_ASSIGN_OR_RETURN(p.known_domains, custom.Strings("known_domains"));
  if (!p.custom_domains && !p.known_domains.empty()) return custom.Error("known_domains", "needs domains = true");
  OS_ASSIGN_OR_RETURN(p.contrib_ops, custom.Strings("contrib_ops"));
  OS_ASSIGN_OR_RETURN(p.custom_source, custom.SourceOf());
  OS_RETURN_IF_ERROR(custom.CheckNoUnknownKeys());

  TableReader outputs = sub("outputs");
  TableReader plan = sub("plan");
  OS_RETURN_IF_ERROR(ReadOutputsAndPlan(outputs, plan, p));

  top.String("missing", false).IgnoreError();
  if (const toml::node* m = root.get("missing")) {
    const toml::array* entries = m->as_array();
    if (!entries) return top.Error("missing", "wants [[missing]] tables");
    for (size_t i = 0; i < entries->size(); ++i) {
      const toml::table* t = entries->get(i)->as_table();
      if (!t) return top.Error("missing", "wants [[missing]] tables");
      TableReader r(t, absl::StrCat("missing[", i, "]"), origin);
      MissingOp op;
      r.String("ops", false).IgnoreError();
      const toml::array* ops = t->get_as<toml::array>("ops");
      if (!ops || ops->empty()) return r.Error("ops", "wants a non-empty list of op types");
      for (const auto& o : *ops) {
        auto s = o.value<std::string>();
        if (!s || s->empty()) return r.Error("ops", "wants op type strings");
        op.ops.push_back(*s);
      }
      OS_ASSIGN_OR_RETURN(op.domain, r.String("domain", false));
      OS_ASSIGN_OR_RETURN(op.when, r.String("when", false));
      OS_ASSIGN_OR_RETURN(op.remedy, r.String("remedy", false));
      if (std::find(op.ops.begin(), op.ops.end(), "*") != op.ops.end() && (op.ops.size() != 1 || op.when.empty()))
        return r.Error("ops",
                       "'*' (every op) stands alone and needs a `when` (a target lacking every op is no target)");
      OS_ASSIGN_OR_RETURN(op.source, r.SourceOf());
      OS_RETURN_IF_ERROR(r.CheckNoUnknownKeys());
      p.missing.push_back(std::move(op));
    }
  }
  OS_RETURN_IF_ERROR(top.CheckNoUnknownKeys());
  return p;
}

const std::vector<Profile>& BuiltinProfiles() {
  static const std::vector<Profile>* profiles = [] {
    auto* out = new std::vector<Profile>;
    for (const auto& [file, text] : EmbeddedProfileTexts()) {
      auto p = ParseProfile(text, "targets/" + file);
      // The build checks every profile (tests/cpp/target_test.cc); a broken one is a
      // build defect, reported here rather than silently dropped.
      if (!p.ok()) {
        Profile broken;
        broken.name = file.substr(0, file.rfind('.'));
        broken.title = absl::StrCat("INVALID PROFILE: ", p.status().message());
        broken.origin = "targets/" + file;
        out->push_back(std::move(broken));
        continue;
      }
      out->push_back(*std::move(p));
    }
    std::sort(out->begin(), out->end(), [](const Profile& a, const Profile& b) { return a.name < b.name; });
    return out;
  }();
  return *profiles;
}

StatusOr<Profile> LoadProfile(const std::string& name_or_path) {
  if (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".toml") {
    std::ifstream f(name_or_path, std::ios::binary);
    if (!f) return absl::NotFoundError(absl::StrCat("cannot read target profile '", name_or_path, "'"));
    std::stringstream text;
    text << f.rdbuf();
    return ParseProfile(text.str(), name_or_path);
  }
  std::vector<std::string> names;
  for (const Profile& p : BuiltinProfiles()) {
    if (p.name == name_or_path) {
      if (p.opset_max == 0) return absl::InternalError(absl::StrCat("target '", p.name, "': ", p.title));
      return p;
    }
    names.push_back(p.name);
  }
  return absl::NotFoundError(absl::StrCat("unknown target '", name_or_path, "' (known: ", absl::StrJoin(names, ", "),
                                          "; or a path to a .toml profile)"));
}

}  // namespace onnxsurgeon::target
