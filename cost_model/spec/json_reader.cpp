#include "cost_model/spec/json_reader.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"
#include "cost_model/spec/printable.hpp"

namespace zeropp {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// Line and column (1-based) of the `byte`-th character (1-based, as nlohmann counts; at most the text's end).
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 0;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return {line, std::max<std::size_t>(column, 1)};
}

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line L, column C: " prefix,
// and with the bytes of the input it quotes that are not printable ASCII shown as \xNN (invalid UTF-8 must not
// reach a terminal raw).
std::string error_detail(const std::string& what) {
  std::string detail = what;
  if (const auto bracket = detail.find("] "); detail.starts_with("[json.exception.") && bracket != std::string::npos)
    detail = detail.substr(bracket + 2);
  if (detail.starts_with("parse error")) {
    const auto column = detail.find("column ");
    const auto colon = detail.find(": ", column == std::string::npos ? 0 : column);
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
  }
  std::string printable;
  for (const char c : detail) {
    const auto byte = static_cast<unsigned char>(c);
    printable += byte >= 0x20 && byte < 0x7f ? std::string(1, c) : fmt::format("\\x{:02x}", byte);
  }
  return printable;
}

// `size`: "3221225472 bytes, " when known, else empty.
[[noreturn]] void too_large(const std::string& source, const std::string& size, const JsonLimits& limits) {
  constexpr std::uintmax_t kMiB = std::uintmax_t{1} << 20;
  const std::string limit = limits.max_bytes % kMiB == 0 ? fmt::format("{} MiB", limits.max_bytes / kMiB)
                                                         : fmt::format("{} bytes", limits.max_bytes);
  throw SpecError("", fmt::format("{}: {}over the limit of {} for {} JSON", source, size, limit, limits.kind));
}

// A SAX handler that builds the document like nlohmann's own, and on the way enforces the depth limit, rejects
// duplicate keys, and keeps the path of the value being parsed, so an error can name where it happened.
class CheckedBuilder {
 public:
  CheckedBuilder(std::string_view text, const std::string& source, const JsonLimits& limits)
      : text_(text), source_(source), limits_(limits) {}

  json take() { return std::move(root_); }

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(json::number_integer_t v) { return add(v); }
  bool number_unsigned(json::number_unsigned_t v) { return add(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(v); }
  bool string(json::string_t& v) {
    no_nul(v, "the string at \"" + path() + "\"");
    return add(std::move(v));
  }
  bool binary(json::binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    const std::string object = path(frames_.size() - 1);  // the object the key is in
    no_nul(k, object.empty() ? std::string("a key") : "a key in \"" + object + "\"");
    Frame& f = frames_.back();
    // nlohmann keeps the last of two equal keys; a repeated key is almost always an edit gone wrong, so it is an
    // error here, like an unknown key.
    if (!f.keys.insert(k).second) throw SpecError("", fmt::format("{}: duplicate key \"{}\"", source_, k));
    f.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) {
    // `position` counts the characters read, the offending token included. A number out of range is reported
    // where it starts, with the key that holds it; a syntax error where the parser stopped.
    const bool overflow = e.id == 406;
    const std::size_t byte = overflow ? position - std::min(position, last_token.size()) + 1 : position;
    const auto [line, column] = line_column(text_, byte);
    const std::string where = overflow && !frames_.empty() ? fmt::format(" (at \"{}\")", path()) : "";
    throw SpecError("",
                    fmt::format("{}:{}:{}: invalid JSON: {}{}", source_, line, column, error_detail(e.what()), where));
  }

 private:
  struct Frame {
    json* container;
    std::string key;             // objects: the key of the value being parsed
    std::set<std::string> keys;  // objects: the keys seen so far
  };

  // A NUL ("\u0000") in a key or a string: no name, path or key of a config holds one, and every message that
  // quoted it would end at it (what() is a C string). Refused here, the NUL written as \x00.
  void no_nul(const std::string& text, const std::string& where) const {
    if (text.find('\0') == std::string::npos) return;
    throw SpecError("", fmt::format("{}: invalid JSON: {} holds a NUL character (\\u0000): \"{}\"", source_, where,
                                    printable(text)));
  }

  // Adds `value` to the innermost open container (or makes it the root); returns where it now lives.
  json* place(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& f = frames_.back();
    if (f.container->is_array()) return &f.container->emplace_back(std::move(value));
    return &((*f.container)[f.key] = std::move(value));
  }
  bool add(json&& value) {
    place(std::move(value));
    return true;
  }
  bool open(json&& container) {
    // Checked before the container exists, so nothing ever holds a document deeper than the limit.
    if (frames_.size() >= limits_.max_depth)
      throw SpecError("", fmt::format("{}: invalid JSON: objects and arrays nested deeper than {} levels (the limit "
                                      "for {} JSON)",
                                      source_, limits_.max_depth, limits_.kind));
    frames_.push_back({place(std::move(container)), {}, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  // "parallel.tp", "strategies[2]": the value being parsed. Outer frames hold their open child as the last
  // element; the innermost one has not added the value yet.
  // `depth` < the open frames: the path of the container at that depth.
  std::string path(std::size_t depth) const {
    std::string out;
    for (std::size_t i = 0; i < depth; ++i) {
      const Frame& f = frames_[i];
      if (f.container->is_array()) {
        const std::size_t n = f.container->size();
        out += fmt::format("[{}]", i + 1 == frames_.size() ? n : n - 1);
      } else {
        out += (out.empty() ? "" : ".") + f.key;
      }
    }
    return out;
  }

  std::string path() const { return path(frames_.size()); }

  std::string_view text_;
  const std::string& source_;
  const JsonLimits& limits_;
  json root_;
  std::vector<Frame> frames_;  // the open objects and arrays, outermost first
};

}  // namespace

json parse_json_with_comments(std::string_view text, const std::string& source_name, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) too_large(source_name, fmt::format("{} bytes, ", text.size()), limits);
  // nlohmann takes a NUL byte for the end of the input and would ignore whatever follows it.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto [line, column] = line_column(text, nul + 1);
    throw SpecError("", fmt::format("{}:{}:{}: invalid JSON: NUL byte", source_name, line, column));
  }
  CheckedBuilder builder(text, source_name, limits);
  json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/true);
  return builder.take();
}

json read_json_file(const fs::path& path, const JsonLimits& limits) {
  const std::string name = path.string();
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw SpecError("", fmt::format("{}: is a directory, not a JSON file", name));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError("", fmt::format("{}: cannot read the file", name));
  InputFiles::note(path);  // an output of this command must not replace it (atomic_file.hpp)
  // The size a regular file reports is checked before reading; the read itself stops one chunk past the limit,
  // for files that report no size (/proc, pipes) or grow while being read.
  if (const std::uintmax_t size = fs::file_size(path, ec); !ec && size > limits.max_bytes)
    too_large(name, fmt::format("{} bytes, ", size), limits);
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > limits.max_bytes) too_large(name, "", limits);
  }
  if (in.bad()) throw SpecError("", fmt::format("{}: cannot read the file", name));
  return parse_json_with_comments(text, name, limits);
}

}  // namespace zeropp
