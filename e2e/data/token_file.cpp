// The binary token file (format in token_batch.hpp).
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost_model/spec/atomic_file.hpp"
#include "cost_model/spec/input_files.hpp"
#include "e2e/data/token_batch.hpp"

namespace zeropp::e2e {
namespace {

constexpr char kMagic[4] = {'Z', 'P', 'T', 'K'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 24;

std::uint32_t load_u32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}
std::uint64_t load_u64(const unsigned char* p) {
  return std::uint64_t{load_u32(p)} | std::uint64_t{load_u32(p + 4)} << 32;
}
void store_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void store_u64(unsigned char* p, std::uint64_t v) {
  store_u32(p, static_cast<std::uint32_t>(v));
  store_u32(p + 4, static_cast<std::uint32_t>(v >> 32));
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

// count * width in decimal, exactly: a header may claim up to 2^64-1 tokens of 4 bytes, past 64 bits.
std::string byte_count(std::uint64_t count, std::uint32_t width) {
  unsigned __int128 bytes = static_cast<unsigned __int128>(count) * width;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(bytes % 10)));
    bytes /= 10;
  } while (bytes != 0);
  return digits;
}

}  // namespace

TokenFileData::TokenFileData(const std::string& path) : path_(path) {
  // A folder opens like a file on Linux and reads as empty: say what it is, not "truncated header".
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a folder, not a token file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open token file");
  InputFiles::note(path);  // an output of this run must not replace it (cost_model/spec/atomic_file.hpp)
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kHeaderBytes) {
    fail(path, "truncated header: " + std::to_string(bytes.size()) + " bytes, a ZPTK header has " +
                   std::to_string(kHeaderBytes));
  }
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) fail(path, "wrong magic (expected \"ZPTK\"): not a zeropp token file");
  const std::uint32_t version = load_u32(bytes.data() + 4);
  if (version != kVersion) fail(path, "unsupported version " + std::to_string(version) + " (this build reads 1)");
  const std::uint32_t width = load_u32(bytes.data() + 8);
  if (width != 2 && width != 4) fail(path, "bytes per token is " + std::to_string(width) + ", must be 2 or 4");
  const std::uint32_t vocab = load_u32(bytes.data() + 12);
  if (vocab < 2 || vocab > 0x7fffffffu) fail(path, "vocabulary size " + std::to_string(vocab) + " is invalid");
  const std::uint64_t count = load_u64(bytes.data() + 16);
  const std::uint64_t body = bytes.size() - kHeaderBytes;
  if (count > body / width) {
    fail(path, "truncated: header says " + std::to_string(count) + " tokens (" + byte_count(count, width) +
                   " bytes), the file holds " + std::to_string(body) + " bytes after the header");
  }
  if (body != count * width) {
    fail(path, std::to_string(body - count * width) + " trailing bytes after " + std::to_string(count) + " tokens");
  }
  vocab_ = static_cast<int>(vocab);
  tokens_.resize(count);
  const unsigned char* p = bytes.data() + kHeaderBytes;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint32_t v =
        width == 2 ? (std::uint32_t{p[2 * i]} | std::uint32_t{p[2 * i + 1]} << 8) : load_u32(p + 4 * i);
    if (v >= vocab) {
      fail(path, "token " + std::to_string(i) + " is " + std::to_string(v) + ", not below the vocabulary size " +
                     std::to_string(vocab));
    }
    tokens_[i] = static_cast<std::int32_t>(v);
  }
}

void TokenFileData::sequence(std::int64_t n, int T, std::int32_t* tokens) const {
  const std::int64_t count = this->count();
  if (count <= T) {
    fail(path_, "holds " + std::to_string(count) + " tokens, a sequence needs T+1 = " + std::to_string(T + 1));
  }
  const std::int64_t start = (n * T) % (count - T);
  for (int t = 0; t <= T; ++t) tokens[t] = tokens_[static_cast<std::size_t>(start + t)];
}

void write_token_file(const std::string& path, const std::vector<std::int32_t>& tokens, int vocab,
                      int bytes_per_token) {
  if (bytes_per_token != 2 && bytes_per_token != 4) {
    throw std::invalid_argument("write_token_file: bytes_per_token must be 2 or 4");
  }
  if (bytes_per_token == 2 && vocab > 65536) {
    throw std::invalid_argument("write_token_file: vocabulary " + std::to_string(vocab) + " does not fit uint16");
  }
  std::vector<unsigned char> bytes(kHeaderBytes + tokens.size() * static_cast<std::size_t>(bytes_per_token));
  std::memcpy(bytes.data(), kMagic, 4);
  store_u32(bytes.data() + 4, kVersion);
  store_u32(bytes.data() + 8, static_cast<std::uint32_t>(bytes_per_token));
  store_u32(bytes.data() + 12, static_cast<std::uint32_t>(vocab));
  store_u64(bytes.data() + 16, tokens.size());
  unsigned char* p = bytes.data() + kHeaderBytes;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      throw std::invalid_argument("write_token_file: token " + std::to_string(i) + " outside the vocabulary");
    }
    const auto v = static_cast<std::uint32_t>(tokens[i]);
    for (int k = 0; k < bytes_per_token; ++k) p[i * bytes_per_token + k] = static_cast<unsigned char>(v >> (8 * k));
  }
  // Whole or not at all, the temporary removed on failure (the project's one atomic writer).
  write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), "token file",
                        ParentDirs::must_exist);
}

std::unique_ptr<DataSource> make_data_source(const std::string& spec, int vocab, std::uint64_t seed) {
  if (spec.empty() || spec == "synthetic") return std::make_unique<SyntheticData>(vocab, seed);
  const std::string path = spec.rfind("file:", 0) == 0 ? spec.substr(5) : spec;
  auto data = std::make_unique<TokenFileData>(path);
  if (data->vocab() > vocab) {
    throw std::runtime_error(path + ": vocabulary " + std::to_string(data->vocab()) + " exceeds the model's " +
                             std::to_string(vocab));
  }
  return data;
}

}  // namespace zeropp::e2e
