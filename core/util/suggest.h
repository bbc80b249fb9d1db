// "Did you mean ...?" for unknown names (flags, passes, options, simplify steps): the
// closest candidate by edit distance, when it is close enough to be a likely typo.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onnxsurgeon {

// Levenshtein distance (insert, delete, substitute; each costs 1).
size_t EditDistance(std::string_view a, std::string_view b);

// Given a misspelt name and the names that exist. Execute picks the nearest one.
// Result it, when at most a third of its letters (at least 2) would have to change, or when
// one name is a prefix of the other; nothing otherwise.
std::optional<std::string> ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace onnxsurgeon
