// Synthetic data (deterministic, split-independent indexing, entropy floor) and the ZPTK token file format.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "e2e/data/token_batch.hpp"

namespace zeropp::e2e {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("zeropp_unit_" + std::to_string(::getpid()) + "_" + name)).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Expects the constructor to throw a runtime_error whose message starts with the path and contains `what`.
void expect_file_error(const std::string& path, const std::string& what) {
  try {
    TokenFileData d(path);
    ADD_FAILURE() << "no error for " << path << " (expected '" << what << "')";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(SyntheticData, DeterministicAndFollowsThePermutation) {
  const SyntheticData a(50, 7, 0.1), b(50, 7, 0.1), c(50, 8, 0.1);
  const TokenBatch x = a.batch(2, 1, 4, 3, 32), y = b.batch(2, 1, 4, 3, 32), z = c.batch(2, 1, 4, 3, 32);
  EXPECT_EQ(x.inputs, y.inputs);
  EXPECT_EQ(x.targets, y.targets);
  EXPECT_NE(x.inputs, z.inputs);
  for (int j = 0; j < 3; ++j) {
    for (int t = 0; t + 1 < 32; ++t) EXPECT_EQ(x.targets[j * 32 + t], x.inputs[j * 32 + t + 1]);
  }
  // The successor map is a permutation followed ~90% of the time.
  std::map<int, std::map<int, int>> next;
  int total = 0;
  for (int g = 0; g < 40; ++g) {
    const TokenBatch tb = a.batch(0, g, 40, 4, 64);
    for (std::size_t i = 0; i < tb.inputs.size(); ++i) ++next[tb.inputs[i]][tb.targets[i]], ++total;
  }
  int follow = 0;
  for (auto& [from, counts] : next) {
    int best = 0;
    for (auto& [to, n] : counts) best = std::max(best, n);
    follow += best;
  }
  EXPECT_NEAR(static_cast<double>(follow) / total, 0.9 + 0.1 / 50, 0.02);
}

TEST(SyntheticData, IndexingIsIndependentOfTheSplit) {
  // Sequence j of micro-batch g (b per micro-batch, M per iteration) is global sequence (i*M + g)*b + j:
  // the same sequence whether the iteration is cut into M micro-batches of b or M*b micro-batches of 1.
  const SyntheticData d(30, 3);
  const int M = 3, b = 2, T = 8;
  for (int g = 0; g < M; ++g) {
    const TokenBatch big = d.batch(5, g, M, b, T);
    for (int j = 0; j < b; ++j) {
      const TokenBatch one = d.batch(5, g * b + j, M * b, 1, T);
      EXPECT_TRUE(std::equal(one.inputs.begin(), one.inputs.end(), big.inputs.begin() + j * T));
    }
  }
  EXPECT_THROW(d.batch(0, M, M, b, T), std::out_of_range);
}

TEST(SyntheticData, EntropyFloor) {
  EXPECT_NEAR(SyntheticData(64, 1, 0.0).entropy_floor(), 0.0, 1e-12);
  EXPECT_NEAR(SyntheticData(64, 1, 1.0).entropy_floor(), std::log(64.0), 1e-12);
  // V = 256, noise = 0.1: p_follow = 0.9 + 0.1/256, the other 255 tokens 0.1/256 each.
  const double pf = 0.9 + 0.1 / 256, po = 0.1 / 256;
  EXPECT_NEAR(SyntheticData(256, 1, 0.1).entropy_floor(), -pf * std::log(pf) - 255 * po * std::log(po), 1e-12);
  EXPECT_NEAR(SyntheticData(256, 1, 0.1).entropy_floor(), 0.8762, 1e-4);  // evaluated separately in Python
}

TEST(TokenFile, RoundTripBothWidths) {
  std::vector<std::int32_t> tokens;
  for (int i = 0; i < 100; ++i) tokens.push_back((i * 37) % 1000);
  for (int width : {2, 4}) {
    const std::string path = temp_path("roundtrip" + std::to_string(width));
    write_token_file(path, tokens, 1000, width);
    EXPECT_EQ(std::filesystem::file_size(path), 24u + tokens.size() * width);
    const TokenFileData d(path);
    EXPECT_EQ(d.vocab(), 1000);
    EXPECT_EQ(d.count(), 100);
    // Sequence n starts at (n*T) mod (count - T): n = 0 at 0, n = 12 (T = 8) at 96 mod 92 = 4.
    std::vector<std::int32_t> seq(9);
    d.sequence(0, 8, seq.data());
    EXPECT_TRUE(std::equal(seq.begin(), seq.end(), tokens.begin()));
    d.sequence(12, 8, seq.data());
    EXPECT_TRUE(std::equal(seq.begin(), seq.end(), tokens.begin() + 4));
    std::filesystem::remove(path);
  }
}

TEST(TokenFile, ErrorsNameTheFileAndTheProblem) {
  const std::string good = temp_path("good");
  write_token_file(good, {1, 2, 3, 4, 5, 6}, 10, 2);
  const std::string bytes = read_bytes(good);
  const std::string bad = temp_path("bad");

  expect_file_error(temp_path("missing"), "cannot open");
  // A folder opens like an empty file on Linux: named as what it is, not as a truncated header.
  const std::string folder = temp_path("folder");
  std::filesystem::create_directories(folder);
  expect_file_error(folder, "is a folder, not a token file");
  std::filesystem::remove(folder);
  write_bytes(bad, bytes.substr(0, 10));
  expect_file_error(bad, "truncated header");
  write_bytes(bad, "ZPTX" + bytes.substr(4));
  expect_file_error(bad, "wrong magic");
  std::string v2 = bytes;
  v2[4] = 2;
  write_bytes(bad, v2);
  expect_file_error(bad, "unsupported version 2");
  std::string w3 = bytes;
  w3[8] = 3;
  write_bytes(bad, w3);
  expect_file_error(bad, "bytes per token is 3");
  write_bytes(bad, bytes.substr(0, bytes.size() - 3));
  expect_file_error(bad, "truncated: header says 6 tokens");
  write_bytes(bad, bytes + "xy");
  expect_file_error(bad, "2 trailing bytes");
  std::string big = bytes;
  big[24] = 12;  // first token 12 >= V = 10
  write_bytes(bad, big);
  expect_file_error(bad, "not below the vocabulary size 10");
  // Too short for one sequence: an error when the sequence is read, naming the file.
  const TokenFileData d(good);
  std::vector<std::int32_t> seq(9);
  EXPECT_THROW(d.sequence(0, 8, seq.data()), std::runtime_error);
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

// A header that claims 2^64-1 tokens: the byte count it implies (past 64 bits) is printed exactly, not wrapped.
TEST(TokenFile, AHugeCountIsReportedWithoutWrapAround) {
  const std::string good = temp_path("huge-good");
  write_token_file(good, {1, 2, 3}, 10, 4);
  std::string bytes = read_bytes(good);
  for (int i = 16; i < 24; ++i) bytes[i] = static_cast<char>(0xff);  // count = 2^64-1, little-endian
  const std::string bad = temp_path("huge-bad");
  write_bytes(bad, bytes);
  // (2^64-1) x 4 = 73786976294838206460.
  expect_file_error(bad,
                    "truncated: header says 18446744073709551615 tokens (73786976294838206460 bytes), the file "
                    "holds 12 bytes after the header");
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST(TokenFile, MakeDataSource) {
  EXPECT_NE(dynamic_cast<SyntheticData*>(make_data_source("synthetic", 16, 1).get()), nullptr);
  const std::string path = temp_path("make");
  write_token_file(path, std::vector<std::int32_t>(40, 3), 20, 4);
  EXPECT_EQ(make_data_source("file:" + path, 32, 1)->vocab(), 20);
  EXPECT_THROW(make_data_source(path, 16, 1), std::runtime_error);  // file vocabulary larger than the model's
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace zeropp::e2e
