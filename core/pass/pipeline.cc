#include "core/pass/pipeline.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/util/suggest.h"

namespace onnxsurgeon {
namespace {

bool IsNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

class PipelineParser {
 public:
  explicit PipelineParser(std::string_view text) : text_(text) {}

  StatusOr<std::vector<PipelineItem>> Parse() {
    std::vector<PipelineItem> items;
    SkipSpaces();
    if (AtEnd()) return items;
    while (true) {
      OS_ASSIGN_OR_RETURN(PipelineItem item, ParseItem());
      items.push_back(std::move(item));
      SkipSpaces();
      if (AtEnd()) break;
      if (Peek() != ',')
        return Error(pos_, 1, absl::StrCat("expected ',' between passes, found '", std::string(1, Peek()), "'"));
      ++pos_;
      SkipSpaces();
      if (AtEnd()) return Error(pos_, 1, "expected a pass name after ','");
    }
    return items;
  }

 private:
  StatusOr<PipelineItem> ParseItem() {
    size_t start = pos_;
    std::string name = Name();
    if (name.empty()) return Error(pos_, 1, "expected a pass name");
    PipelineItem item;
    item.column = start + 1;
    item.info = FindPass(name);
    if (!item.info) {
      std::vector<std::string> known;
      for (const auto& p : AllPasses()) known.push_back(p.name);
      for (const PassInfo* p : RegisteredPasses()) known.push_back(p->name);
      std::string note = absl::StrCat("known passes: ", absl::StrJoin(known, ", "));
      // `a=x:1,y:2`: the ',' ended a's value and `y` was read as a pass.
      if (start > 0 && !AtEnd() && Peek() == ':') {
        note = absl::StrCat("a value with ',' in it must be quoted, e.g. name=\"x:1,3;y:2\" ",
                            "(list items are separated by ';'), or write dims as 1x3\n", note);
      }
      return Error(start, name.size(), absl::StrCat("unknown pass '", name, "'", DidYouMean(name, known)), note);
    }
    std::map<std::string, std::string> values;
    SkipSpaces();
    if (!AtEnd() && Peek() == '=') {
      ++pos_;
      if (item.info->options.empty())
        return Error(start, name.size(), absl::StrCat("pass '", name, "' takes no options"));
      size_t value_start = pos_;
      std::string value = Value();
      if (unclosed_quote_) return Error(*unclosed_quote_, 1, "unclosed quote");
      if (value.empty()) return Error(value_start, 1, absl::StrCat("expected a value for '", name, "='"));
      const PassOptionSpec& primary = item.info->options.front();
      OS_RETURN_IF_ERROR(CheckValue(name, primary, value, value_start));
      values[primary.name] = value;
    } else if (!AtEnd() && Peek() == '(') {
      ++pos_;
      SkipSpaces();
      while (!AtEnd() && Peek() != ')') {
        size_t key_start = pos_;
        std::string key = Name();
        if (key.empty()) return Error(pos_, 1, "expected an option name");
        const PassOptionSpec* spec = nullptr;
        for (const auto& o : item.info->options)
          if (o.name == key) spec = &o;
        if (!spec) {
          std::vector<std::string> known;
          for (const auto& o : item.info->options) known.push_back(o.name);
          return Error(
              key_start, key.size(),
              absl::StrCat("pass '", name, "' has no option '", key, "'", DidYouMean(key, known)),
              known.empty() ? "it takes no options" : absl::StrCat("its options: ", absl::StrJoin(known, ", ")));
        }
        if (values.count(key)) return Error(key_start, key.size(), absl::StrCat("option '", key, "' given twice"));
        SkipSpaces();
        if (AtEnd() || Peek() != '=') return Error(pos_, 1, absl::StrCat("expected '=' after option '", key, "'"));
        ++pos_;
        size_t value_start = pos_;
        std::string value = Value();
        if (unclosed_quote_) return Error(*unclosed_quote_, 1, "unclosed quote");
        if (value.empty()) return Error(value_start, 1, absl::StrCat("expected a value for option '", key, "'"));
        OS_RETURN_IF_ERROR(CheckValue(name, *spec, value, value_start));
        values[key] = value;
        SkipSpaces();
        if (!AtEnd() && Peek() == ',') {
          ++pos_;
          SkipSpaces();
          continue;
        }
        if (AtEnd() || Peek() != ')') return Error(pos_, 1, "expected ',' or ')' in the option list");
      }
      if (AtEnd()) return Error(pos_, 1, absl::StrCat("unclosed '(' after pass '", name, "'"));
      ++pos_;  // ')'
    }
    item.options = PassOptions(item.info->options, std::move(values));
    return item;
  }

  // A value its option's declared type refuses, underlined where it starts (a quoted
  // value: at its opening quote).
  Status CheckValue(const std::string& pass, const PassOptionSpec& spec, const std::string& value, size_t at) {
    Status s = CheckOptionValue(spec, value);
    if (s.ok()) return s;
    while (at < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[at]))) ++at;
    return Error(at, std::max<size_t>(1, pos_ > at ? pos_ - at : 1),
                 absl::StrCat(pass, ": option '", spec.name, "' ", s.message()));
  }

  std::string Name() {
    size_t start = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // A quoted value ('...' or "...") is taken verbatim. Unquoted, a value ends at ( ) or a
  // ',' that starts the next pass; a ',' followed by a digit or '?' stays in the value,
  // since no pass name starts with one: set-input-shape=images:1,3,320,320 parses.
  // An unclosed quote yields the rest of the text and Parse reports it.
  std::string Value() {
    SkipSpaces();
    if (!AtEnd() && (Peek() == '"' || Peek() == '\'')) {
      char quote = Peek();
      size_t open = pos_++;
      size_t close = text_.find(quote, pos_);
      if (close == std::string_view::npos) {
        unclosed_quote_ = open;
        pos_ = text_.size();
        return std::string(text_.substr(open + 1));
      }
      pos_ = close + 1;
      return std::string(text_.substr(open + 1, close - open - 1));
    }
    size_t start = pos_;
    while (!AtEnd() && Peek() != '(' && Peek() != ')') {
      if (Peek() == ',' &&
          !(pos_ + 1 < text_.size() &&
            (absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_ + 1])) || text_[pos_ + 1] == '?')))
        break;
      ++pos_;
    }
    std::string_view v = text_.substr(start, pos_ - start);
    return std::string(absl::StripAsciiWhitespace(absl::string_view(v.data(), v.size())));
  }

  void SkipSpaces() {
    while (!AtEnd() && absl::ascii_isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  Status Error(size_t at, size_t width, std::string_view message, std::string_view note = {}) {
    std::string caret(at, ' ');
    caret += '^';
    if (width > 1) caret += std::string(width - 1, '~');
    std::string out = absl::StrCat("pipeline error at column ", at + 1, ": ", std::string(message), "\n  ",
                                   std::string(text_), "\n  ", caret);
    if (!note.empty()) absl::StrAppend(&out, "\n", std::string(note));
    return absl::InvalidArgumentError(out);
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::optional<size_t> unclosed_quote_;
};

}  // namespace

StatusOr<std::vector<PipelineItem>> ParsePipeline(std::string_view text) { return PipelineParser(text).Parse(); }

}  // namespace onnxsurgeon
