#pragma once
// The criterion's machine-readable form, one definition for every command that prints it (`zeropp criterion`,
// `zeropp report`): the byte comparison 2sUb vs 9h and, with a cluster, the time-based answer.
#include <string>

#include <nlohmann/json.hpp>

#include "cost_model/analytic/criterion.hpp"

namespace zeropp::analytic {

// lhs, rhs, holds, bytes per layer (ZeroPP per unit and per W, TP), min_unit, min_unit_per_w (null: none).
nlohmann::json to_json(const Criterion& c);
// cluster, group, compute/TP exposed/ZeroPP comm/ZeroPP exposed seconds, holds, min_unit (null: none).
nlohmann::json to_json(const CriterionTime& t, const std::string& cluster);

}  // namespace zeropp::analytic
