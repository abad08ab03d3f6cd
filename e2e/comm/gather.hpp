#pragma once
// Small helpers over Communicator for reports: every rank's string / numbers, on every rank.
#include <string>
#include <vector>

#include "e2e/comm/communicator.hpp"

namespace zeropp::e2e {

// Collective: result[r] is rank r's `text`.
std::vector<std::string> all_gather_strings(Communicator&, const std::string& text);
// Collective: result[r] is rank r's `values` (every rank passes the same count).
std::vector<std::vector<double>> all_gather_values(Communicator&, const std::vector<double>& values);

}  // namespace zeropp::e2e
