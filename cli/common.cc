#include "cli/common.h"

#include <iostream>

#include "absl/strings/str_format.h"
#include "core/util/suggest.h"

namespace onnxsurgeon::cli {

std::string OneLine(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (unsigned char c : message) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += absl::StrFormat("\\x%02x", c);
    else out += static_cast<char>(c);
  }
  return out;
}

int UsageError(const std::string& command, const std::string& message) {
  std::cerr << "onnxsurgeon: " << OneLine(message) << " (see 'onnxsurgeon " << (command.empty() ? "" : command + " ")
            << "--help')\n";
  return kUsageError;
}

int ModelError(const Status& status) {
  std::cerr << "onnxsurgeon: error: " << OneLine(std::string(status.message())) << "\n";
  return kModelError;
}

namespace {

std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  }
  return names;
}

}  // namespace

std::optional<int> ParseArguments(CLI::App& app, const std::string& command, const std::vector<std::string>& args) {
  app.allow_extras();  // so unknown flags are ours to explain, with a suggestion
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kOk;
  } catch (const CLI::ParseError& e) {
    return UsageError(command, e.what());
  }
  std::vector<std::string> extras = app.remaining();
  for (const std::string& extra : extras) {
    if (extra.size() > 1 && extra[0] == '-') {
      std::string flag = extra.substr(0, extra.find('='));
      return UsageError(command, "unknown option '" + flag + "'" + DidYouMean(flag, FlagNames(app)));
    }
  }
  if (!extras.empty()) return UsageError(command, "unexpected argument '" + extras.front() + "'");
  return std::nullopt;
}

}  // namespace onnxsurgeon::cli
