#include "cost_model/analytic/criterion_json.hpp"

namespace zeropp::analytic {

nlohmann::json to_json(const Criterion& c) {
  return {{"layer_params", c.layer_params},
          {"lhs", c.lhs},
          {"rhs", c.rhs},
          {"rhs_gpt", c.rhs_gpt},
          {"holds", c.holds},
          {"zeropp_bytes_per_layer", c.zeropp_bytes_per_layer},
          {"zeropp_per_w_bytes_per_layer", c.zeropp_per_w_bytes_per_layer},
          {"tp_bytes_per_layer", c.tp_bytes_per_layer},
          {"min_unit", c.min_unit},
          {"min_unit_per_w", c.min_unit_per_w ? nlohmann::json(*c.min_unit_per_w) : nlohmann::json()}};
}

nlohmann::json to_json(const CriterionTime& t, const std::string& cluster) {
  return {{"cluster", cluster},
          {"group", t.group},
          {"compute_s", t.compute_s},
          {"tp_exposed_s", t.tp_exposed_s},
          {"zeropp_comm_s", t.zeropp_comm_s},
          {"zeropp_exposed_s", t.zeropp_exposed_s},
          {"holds", t.holds},
          {"min_unit", t.min_unit ? nlohmann::json(*t.min_unit) : nlohmann::json()}};
}

}  // namespace zeropp::analytic
