#pragma once
// Strict reading of one JSON object for the spec loaders (internal to cost_model/spec).
// The reader is built with the object's allowed keys and rejects any other key at once, so a typo is reported
// as the typo ("model.hiden: unknown key") instead of as a missing or defaulted field. Every getter checks the
// JSON type and names the dotted path in its error.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace zeropp::detail {

class Fields {
 public:
  // Throws SpecError when `object` is not a JSON object or holds a key outside `allowed`.
  Fields(const nlohmann::json& object, std::string path, std::initializer_list<std::string_view> allowed);

  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const { return path_ + "." + std::string(key); }
  bool has(std::string_view key) const;
  const nlohmann::json& at(std::string_view key) const;  // throws "<path>.<key> is required" when absent

  // Required values.
  int integer(std::string_view key) const;
  double number(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::string string(std::string_view key) const;
  // Optional values: the fallback when the key is absent; a present key must have the right type.
  int integer(std::string_view key, int fallback) const;
  long long integer64(std::string_view key) const;
  double number(std::string_view key, double fallback) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, std::string fallback) const;

 private:
  const nlohmann::json& object_;
  std::string path_;
};

// Type checks of a single value at `path` (used for array elements and map values).
long long as_integer(const nlohmann::json& value, const std::string& path);
double as_number(const nlohmann::json& value, const std::string& path);
std::string as_string(const nlohmann::json& value, const std::string& path);
void expect_object(const nlohmann::json& value, const std::string& path);
void expect_array(const nlohmann::json& value, const std::string& path);

// A short rendering of a JSON value for messages (strings quoted, long values cut).
std::string show(const nlohmann::json& value);

}  // namespace zeropp::detail
