#include "e2e/comm/gather.hpp"

#include <algorithm>
#include <cstdint>

namespace zeropp::e2e {

std::vector<std::string> all_gather_strings(Communicator& comm, const std::string& text) {
  const int n = comm.size();
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(n));
  const std::int64_t mine = static_cast<std::int64_t>(text.size());
  comm.all_gather(&mine, lengths.data(), 1, DataType::i64);
  const std::size_t most = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  std::string padded = text;
  padded.resize(most);
  std::string all(most * n, '\0');
  comm.all_gather(padded.data(), all.data(), most, DataType::u8);
  std::vector<std::string> out(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) out[r] = all.substr(r * most, static_cast<std::size_t>(lengths[r]));
  return out;
}

std::vector<std::vector<double>> all_gather_values(Communicator& comm, const std::vector<double>& values) {
  const std::size_t count = values.size();
  std::vector<double> all(count * comm.size());
  comm.all_gather(values.data(), all.data(), count, DataType::f64);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) out[r].assign(all.begin() + r * count, all.begin() + (r + 1) * count);
  return out;
}

}  // namespace zeropp::e2e
