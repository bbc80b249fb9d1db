#include "core/pass/pass.h"

#include <cctype>
#include <deque>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onnxsurgeon {

std::string PassOptions::GetString(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

std::vector<std::string> PassOptions::GetList(const std::string& key, std::vector<std::string> fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(absl::string_view(it->second), ';')) {
    item = absl::StripAsciiWhitespace(item);
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

StatusOr<int64_t> PassOptions::GetInt(const std::string& key, int64_t fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  int64_t v;
  if (!absl::SimpleAtoi(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", key, "' wants an integer, got '", it->second, "'"));
  }
  return v;
}

StatusOr<double> PassOptions::GetDouble(const std::string& key, double fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  double v;
  if (!absl::SimpleAtod(it->second, &v)) {
    return absl::InvalidArgumentError(absl::StrCat("option '", key, "' wants a number, got '", it->second, "'"));
  }
  return v;
}

StatusOr<bool> PassOptions::GetBool(const std::string& key, bool fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::string v = absl::AsciiStrToLower(it->second);
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return absl::InvalidArgumentError(absl::StrCat("option '", key, "' wants true or false, got '", it->second, "'"));
}

namespace {

// Run-time passes; a deque keeps the PassInfo addresses pipelines hold stable.
std::deque<PassInfo>& Registered() {
  static auto* passes = new std::deque<PassInfo>();  // never destroyed: may hold Python objects
  return *passes;
}

}  // namespace

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& p : AllPasses())
    if (p.name == name) return &p;
  for (const PassInfo& p : Registered())
    if (p.name == name) return &p;
  return nullptr;
}

Status RegisterPass(PassInfo info) {
  bool kebab = !info.name.empty() && std::isalpha(static_cast<unsigned char>(info.name[0]));
  for (char c : info.name) kebab &= std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  if (!kebab) {
    return absl::InvalidArgumentError(
        absl::StrCat("pass name '", info.name, "' must be kebab-case (lower-case letters, digits, '-')"));
  }
  for (const PassInfo& p : AllPasses())
    if (p.name == info.name) return absl::AlreadyExistsError(absl::StrCat("'", info.name, "' is a built-in pass"));
  for (PassInfo& p : Registered()) {
    if (p.name == info.name) {
      p = std::move(info);
      return absl::OkStatus();
    }
  }
  Registered().push_back(std::move(info));
  return absl::OkStatus();
}

std::vector<const PassInfo*> RegisteredPasses() {
  std::vector<const PassInfo*> out;
  for (const PassInfo& p : Registered()) out.push_back(&p);
  return out;
}

}  // namespace onnxsurgeon
