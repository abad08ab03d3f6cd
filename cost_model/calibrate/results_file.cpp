#include "cost_model/calibrate/results_file.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cost_model/spec/error.hpp"
#include "cost_model/spec/input_files.hpp"
#include "cost_model/spec/names.hpp"

namespace zeropp::calibrate {
namespace {

// nccl-tests print about 100 bytes per size; a whole sweep with NCCL_DEBUG=INFO stays far below this.
constexpr std::uintmax_t kMaxTextBytes = std::uintmax_t{64} << 20;

void check_readable(const std::string& path) {
  std::error_code ec;
  if (!std::ifstream(path) || std::filesystem::is_directory(path, ec))
    throw SpecError(path, path + ": cannot read the file");
}

// Whether the file starts as JSON does, after white space (within its first 64 KiB): '{', '[' or a '/' comment.
// Not a '[' that opens mpirun --tag-output's "[1,0]<stdout>:" before nccl-tests' lines.
bool starts_as_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[1 << 16];
  in.read(head, sizeof head);
  const std::string_view text(head, static_cast<std::size_t>(in.gcount()));
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  if (text[first] == '[') return text.substr(first, 24).find("]<std") == std::string_view::npos;
  return text[first] == '{' || text[first] == '/';
}

// The text of `path`, refused above kMaxTextBytes (checked on the size a file reports, and while reading, for
// those that report none).
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > kMaxTextBytes)
    throw SpecError(path, fmt::format("{}: {} bytes, over the limit of 64 MiB for nccl-tests output", path, size));
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxTextBytes) throw SpecError(path, path + ": over the limit of 64 MiB for nccl-tests output");
  }
  if (in.bad()) throw SpecError(path, path + ": cannot read the file");
  return text;
}

}  // namespace

BenchResults load_results(const std::string& path, const NcclTestsOptions& nccl_tests) {
  check_readable(path);
  InputFiles::note(path);  // an output of this command must not replace it (spec/atomic_file.hpp)
  if (starts_as_json(path)) return load_bench_results(path);  // the JSON reader's own limits and errors
  return parse_nccl_tests(read_text(path), path, nccl_tests);
}

void check_device(const BenchResults& results, const std::string& path, const ClusterSpec& base) {
  if (!results.device || *results.device == base.device) return;
  throw SpecError(
      path, fmt::format("{}: {} cannot calibrate the base cluster \"{}\" (device: {}); calibrate them "
                        "on a {} cluster",
                        path, results.device_evidence, base.name, to_string(base.device), to_string(*results.device)));
}

}  // namespace zeropp::calibrate
