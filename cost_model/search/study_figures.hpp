#pragma once
// The study report's figures, drawn for the experiment reported: the data they show, written by the report into
// its figure folder (beside the report, named after it: report-llama.md -> report-llama-figures/), which
// plots/study_figures.py draws there. Every figure reads the report's own numbers:
//   memory_breakdown  every row's simulated peak memory by part (peak_memory.hpp) with when it occurs, against
//                     the GPU's memory: memory.json (the rows' peak_breakdown);
//   schedule_gantt    the best ZeroPP plan's simulated timeline with its ZeRO-3 gathers and reduce-scatters on
//                     the collective stream: gantt-trace.json (simulate/trace.hpp);
//   criterion_map     the model's criterion map on the cluster (criterion_map.hpp): criterion_map.json;
//   validation        predicted vs published runs of each validation set of the GPU: validation-<set>.json.
// figures.json lists what was written.
#include <filesystem>
#include <vector>

#include "cost_model/search/study_report.hpp"

namespace zeropp::search {

// "<folder>/<stem>-figures" for the report at `report_path`.
std::filesystem::path figure_dir_for(const std::filesystem::path& report_path);

// Writes the data files and figures.json into `dir` (created). Throws SpecError when they cannot be written.
void write_figure_data(const StudyReport&, const std::filesystem::path& dir);

// The figures drawn in `dir` (PNG files present), linked relative to the report's folder, with captions.
std::vector<StudyFigure> drawn_figures(const StudyReport&, const std::filesystem::path& dir,
                                       const std::filesystem::path& report_path);

}  // namespace zeropp::search
