#include "tests/regression/json_diff.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace zeropp::regression {
namespace {

using nlohmann::json;

// RFC 6901: '~' is written "~0" and '/' is written "~1" inside a reference token.
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Values print in full precision (nlohmann's dump writes the shortest text that reads back the same double).
std::string text(const json& j) { return j.dump(); }

bool is_integer(const json& j) { return j.is_number_integer() || j.is_number_unsigned(); }

// A type name for "type" differences; integers and floats are both "number" here (they compare with each other).
std::string kind(const json& j) { return j.is_number() ? "number" : j.type_name(); }

void walk(const json& e, const json& g, const std::string& path, const Tolerance& tol, std::vector<Difference>& out) {
  if (e.is_number() && g.is_number()) {
    if (!numbers_match(e, g, tol)) out.push_back({path, "value", text(e), text(g)});
    return;
  }
  if (kind(e) != kind(g)) {
    out.push_back({path, "type", text(e), text(g)});
    return;
  }
  if (e.is_object()) {
    // Both key sets in sorted order (nlohmann's default object is a std::map), merged.
    auto ei = e.begin(), gi = g.begin();
    while (ei != e.end() || gi != g.end()) {
      if (gi == g.end() || (ei != e.end() && ei.key() < gi.key())) {
        out.push_back({path + "/" + pointer_token(ei.key()), "missing key", text(ei.value()), ""});
        ++ei;
      } else if (ei == e.end() || gi.key() < ei.key()) {
        out.push_back({path + "/" + pointer_token(gi.key()), "unexpected key", "", text(gi.value())});
        ++gi;
      } else {
        walk(ei.value(), gi.value(), path + "/" + pointer_token(ei.key()), tol, out);
        ++ei;
        ++gi;
      }
    }
    return;
  }
  if (e.is_array()) {
    if (e.size() != g.size()) {
      out.push_back({path, "array length", std::to_string(e.size()), std::to_string(g.size())});
    }
    const std::size_t n = std::min(e.size(), g.size());
    for (std::size_t i = 0; i < n; ++i) walk(e[i], g[i], path + "/" + std::to_string(i), tol, out);
    return;
  }
  if (e != g) out.push_back({path, "value", text(e), text(g)});  // string, boolean, null
}

}  // namespace

bool numbers_match(const json& expected, const json& got, const Tolerance& tol) {
  if (is_integer(expected) && is_integer(got)) return expected == got;
  const double e = expected.get<double>(), g = got.get<double>();
  if (std::isnan(e) || std::isnan(g)) return std::isnan(e) && std::isnan(g);
  if (std::isinf(e) || std::isinf(g)) return e == g;
  return std::abs(g - e) <= tol.abs + tol.rel * std::abs(e);
}

std::vector<Difference> diff_json(const json& expected, const json& got, const Tolerance& tol) {
  std::vector<Difference> out;
  walk(expected, got, "", tol, out);
  return out;
}

std::string describe(const Difference& d) {
  const std::string where = d.path.empty() ? "(root)" : d.path;
  if (d.what == "missing key") return fmt::format("{}: missing key: expected {}", where, d.expected);
  if (d.what == "unexpected key") return fmt::format("{}: unexpected key: got {}", where, d.got);
  if (d.what == "value") {
    const json e = json::parse(d.expected), g = json::parse(d.got);
    if (e.is_number() && g.is_number() && e.get<double>() != 0) {
      const double change = g.get<double>() / e.get<double>() - 1;
      return fmt::format("{}: value: expected {}, got {} (relative change {:+.3e})", where, d.expected, d.got, change);
    }
  }
  return fmt::format("{}: {}: expected {}, got {}", where, d.what, d.expected, d.got);
}

}  // namespace zeropp::regression
