// What the study report reads from results/measured/<gpu>/ (search/measured_gpu.hpp): the GPU's line, the trainer
// and PyTorch rows of summary.json with their numbers as written, the trainer results with the model's prediction;
// folders without machine.json or summary.json, and unreadable files, are skipped.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cost_model/search/measured_gpu.hpp"

namespace zeropp::search {
namespace {

namespace fs = std::filesystem;

class MeasuredGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zeropp-measured-gpu-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  fs::path dir_;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST_F(MeasuredGpus, ReadsTheGpuTheStepsAndTheTrainerRuns) {
  write("h100/machine.json",
        R"({"gpu": {"name": "NVIDIA H100 80GB HBM3", "driver_version": "580.1", "power.limit [W]": "700.00 W"}})");
  write("h100/summary.json", R"({
    "trainer": {"iteration_seconds": 0.5, "tokens_per_second": 32768, "mfu": 0.25, "peak_memory_bytes": 2147483648},
    "torch_step": {"eager": {"step_seconds": 0.4, "tokens_per_second": 40960, "mfu": 0.3125,
                             "peak_memory_bytes": 1073741824},
                   "eager_math": {"step_seconds": 1.0, "tokens_per_second": 16384, "mfu": 0.125,
                                  "peak_memory_bytes": 0}},
    "mfu_zeropp_over_torch_eager": 0.8})");
  write("h100/trainer-a.json", R"J({"kind": "zeropp-train", "backend": "cuda", "world": 1, "plan_file": "a.plan.json",
    "model_comparison": {"costs": "analytic (plan's cluster)", "measured_iteration_s": 0.5,
                         "predicted_iteration_s": 0.45}})J");
  write("h100/trainer-b.json", R"J({"kind": "zeropp-train", "backend": "cuda", "world": 1,
    "plan": {"cluster": {"name": "dgx-h200"}},
    "model_comparison": {"costs": "analytic (plan's cluster)", "measured_iteration_s": 0.4,
                         "predicted_iteration_s": 0.3}})J");
  write("h100/ops.json", R"({"kind": "zeropp-operation-table"})");  // not a trainer result: skipped
  write("no-summary/machine.json", R"({"gpu": {"name": "X"}})");  // no summary.json: not a measured GPU

  const std::vector<MeasuredGpu> gpus = load_measured_gpus(dir_);
  ASSERT_EQ(gpus.size(), 1u);
  const MeasuredGpu& g = gpus[0];
  EXPECT_EQ(g.folder, "h100");
  EXPECT_EQ(g.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.driver, "580.1");
  EXPECT_EQ(g.power_limit, "700.00 W");
  ASSERT_EQ(g.steps.size(), 3u);  // the trainer, then PyTorch's modes in a fixed order (compile absent)
  EXPECT_NE(g.steps[0].who.find("zeropp-train"), std::string::npos);
  EXPECT_DOUBLE_EQ(g.steps[0].step_s, 0.5);
  EXPECT_DOUBLE_EQ(g.steps[0].mfu, 0.25);
  EXPECT_DOUBLE_EQ(g.steps[0].peak_memory_gib, 2147483648.0 / kGiB);
  EXPECT_NE(g.steps[1].who.find("eager"), std::string::npos);
  EXPECT_DOUBLE_EQ(g.steps[1].tokens_per_s, 40960);
  EXPECT_NE(g.steps[2].who.find("materialised"), std::string::npos);
  ASSERT_TRUE(g.mfu_over_torch_eager.has_value());
  EXPECT_DOUBLE_EQ(*g.mfu_over_torch_eager, 0.8);
  EXPECT_FALSE(g.flash_mfu_over_torch_eager.has_value());
  ASSERT_EQ(g.trainer.size(), 2u);
  EXPECT_EQ(g.trainer[0].backend, "cuda");
  EXPECT_DOUBLE_EQ(g.trainer[0].measured_s, 0.5);
  EXPECT_NEAR(g.trainer[0].error, -0.1, 1e-12);
  EXPECT_EQ(g.trainer[0].costs, "analytic (plan's cluster)");  // no plan in the result: left as written
  EXPECT_EQ(g.trainer[1].costs, "analytic (dgx-h200)");        // the plan's cluster named
}

TEST_F(MeasuredGpus, SkipsUnreadableFilesAndMissingFolders) {
  write("broken/machine.json", "{not json");
  write("broken/summary.json", "{}");
  EXPECT_TRUE(load_measured_gpus(dir_).empty());
  EXPECT_TRUE(load_measured_gpus(dir_ / "absent").empty());
}

}  // namespace
}  // namespace zeropp::search
