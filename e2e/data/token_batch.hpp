#pragma once
// Training data, indexed so that every parallel split sees the same sequences.
//
// One iteration consumes M global micro-batches (M = B * z * dp for a plan; M = B for the single-rank
// reference) of b sequences of T tokens. Sequence j of global micro-batch g in iteration i is global sequence
//   n = (i * M + g) * b + j,
// and a DataSource is a pure function of n. A plan's runtime maps its (pipeline, local micro-batch) to g
// (e.g. g = pipeline * B + mb); the reference runs g = 0 .. M-1 in order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zeropp::e2e {

// b sequences of T tokens, row-major [b, T]; targets[r] is the token that follows inputs[r].
struct TokenBatch {
  int b = 0;
  int T = 0;
  std::vector<std::int32_t> inputs;
  std::vector<std::int32_t> targets;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual int vocab() const = 0;
  // T + 1 consecutive tokens of global sequence n: inputs are the first T, targets the last T.
  virtual void sequence(std::int64_t n, int T, std::int32_t* tokens_T_plus_1) const = 0;

  // Global micro-batch g of iteration `iteration` (M micro-batches per iteration, b sequences each).
  TokenBatch batch(std::int64_t iteration, int g, int M, int b, int T) const;
};

// The default: a learnable synthetic task, deterministic from the seed. A fixed random permutation P of the
// vocabulary drives each sequence: x[0] is uniform, and x[k+1] = P(x[k]) with probability 1 - noise, else
// uniform. The best achievable loss is the entropy of that transition,
//   H = -(1 - noise + noise/V) ln(1 - noise + noise/V) - (V - 1)(noise/V) ln(noise/V),
// far below ln V for small noise (V = 256, noise = 0.1: H = 0.87 nats vs ln V = 5.55).
class SyntheticData final : public DataSource {
 public:
  SyntheticData(int vocab, std::uint64_t seed, double noise = 0.1);
  int vocab() const override { return vocab_; }
  void sequence(std::int64_t n, int T, std::int32_t* tokens) const override;
  double entropy_floor() const;  // H above, nats per token

 private:
  int vocab_;
  std::uint64_t seed_;
  double noise_;
  std::vector<std::int32_t> perm_;
};

// A binary token file (format below) read into memory. Global sequence n starts at token
// (n * T) mod (count - T): consecutive sequences tile the file and wrap around.
//
// Format (all little-endian):
//   offset 0   4 bytes  magic "ZPTK"
//   offset 4   uint32   version = 1
//   offset 8   uint32   bytes per token: 2 (uint16) or 4 (uint32)
//   offset 12  uint32   vocabulary size V (every token must be < V)
//   offset 16  uint64   token count n (n > T is checked when a sequence is read)
//   offset 24  n tokens
// Errors (missing file, short header, wrong magic, unknown version or width, truncated body, trailing bytes,
// token >= V) throw std::runtime_error whose message starts with the file name and says what is wrong.
class TokenFileData final : public DataSource {
 public:
  explicit TokenFileData(const std::string& path);
  int vocab() const override { return vocab_; }
  void sequence(std::int64_t n, int T, std::int32_t* tokens) const override;
  std::int64_t count() const { return static_cast<std::int64_t>(tokens_.size()); }

 private:
  std::string path_;
  int vocab_ = 0;
  std::vector<std::int32_t> tokens_;
};

// Writes `tokens` in the format above (bytes_per_token 2 or 4), atomically (temp file + rename).
void write_token_file(const std::string& path, const std::vector<std::int32_t>& tokens, int vocab, int bytes_per_token);

// "synthetic" (with seed) or a token file path ("file:<path>" or any other string taken as a path).
std::unique_ptr<DataSource> make_data_source(const std::string& spec, int vocab, std::uint64_t seed);

}  // namespace zeropp::e2e
