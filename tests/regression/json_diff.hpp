#pragma once
// Structural comparison of two JSON documents for the reference-output regression test (docs/regression.md).
// Numbers with a fractional part compare within a tolerance; everything else (object keys, array lengths, strings,
// booleans, null, integers) must match exactly. Each difference names its place as a JSON Pointer (RFC 6901,
// e.g. "/rows/3/error") with the expected and the got value, so a failing CI log says what changed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zeropp::regression {

// |got - expected| <= abs + rel * |expected|. rel carries the comparison; abs only matters near zero, where a
// relative bound is empty (a sum that is 0 on one machine and 1e-17 on another after reordering).
struct Tolerance {
  double rel = 1e-6;
  double abs = 1e-12;
};

struct Difference {
  std::string path;      // JSON Pointer of the differing value ("" is the root)
  std::string what;      // "value", "type", "missing key", "unexpected key", "array length"
  std::string expected;  // compact JSON text of the expected value ("" when the key is unexpected)
  std::string got;       // compact JSON text of the got value ("" when the key is missing)
};

// True when the two numbers are equal under `tol`. Two integers must be equal; a float on either side uses the
// tolerance (33 and 33.0 are the same number).
bool numbers_match(const nlohmann::json& expected, const nlohmann::json& got, const Tolerance& tol);

// Every difference between `expected` and `got`, in document order (object keys in sorted order).
std::vector<Difference> diff_json(const nlohmann::json& expected, const nlohmann::json& got, const Tolerance& tol);

// One line: "<path>: <what>: expected <e>, got <g>" (with the relative change for numbers).
std::string describe(const Difference& d);

}  // namespace zeropp::regression
