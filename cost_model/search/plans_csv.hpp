#pragma once
// Every enumerated plan of a search as CSV (`zeropp search --csv FILE`), one row per plan in enumeration order:
// its split, what the search did with it (fate: rejected, over_memory_bound, pruned_by_time, simulated) and its
// bounds, and for the plans evaluated the simulated (or closed-form) time split and peak. Empty fields where a
// plan was not evaluated. Seconds and bytes. The search must have run with SearchOptions::keep_all.
#include <string>

#include "cost_model/search/search.hpp"

namespace zeropp::search {

std::string plans_csv(const SearchResult&);

}  // namespace zeropp::search
