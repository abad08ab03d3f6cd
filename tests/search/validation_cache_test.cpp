// The validation sets of an experiment's GPU, and their leave-one-out errors cached by input hash
// (search/validation_cache.hpp): a second report reads them back instead of re-running the fits; a changed input
// makes the cache stale.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cost_model/search/validation_cache.hpp"
#include "cost_model/spec/config.hpp"

namespace zeropp::search {
namespace {

namespace fs = std::filesystem;

// Three rows of Narayanan et al. 2021, Table 1 (pp = 1: quick to simulate), as a set file of their own.
std::string small_set(double first_tflops = 137) {
  return R"({"source": "three rows of Narayanan 2021 Table 1", "cluster": "dgx-a100-80gb", "seq_len": 2048,
    "vocab": 51200, "dtype": "fp16", "recompute": "full", "rows": [
    {"name": "1.7B", "heads": 24, "hidden": 2304, "layers": 24, "tp": 1, "pp": 1, "gpus": 32, "global_batch": 512,
     "micro_batch": 16, "v": 1, "dp_overlap": true, "tflops_per_gpu": )" +
         std::to_string(first_tflops) + R"(},
    {"name": "3.6B", "heads": 32, "hidden": 3072, "layers": 30, "tp": 2, "pp": 1, "gpus": 64, "global_batch": 512,
     "micro_batch": 16, "v": 1, "dp_overlap": true, "tflops_per_gpu": 138},
    {"name": "7.5B", "heads": 32, "hidden": 4096, "layers": 36, "tp": 4, "pp": 1, "gpus": 128, "global_batch": 512,
     "micro_batch": 16, "v": 1, "dp_overlap": true, "tflops_per_gpu": 142}]})";
}

class ValidationCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zeropp-validation-cache-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write(small_set());
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(set_path()) << text; }
  std::string set_path() const { return (dir_ / "small.json").string(); }
  fs::path cache() const { return dir_ / "cache"; }
  fs::path dir_;
};

TEST_F(ValidationCache, SecondRunReadsTheFirstsLeaveOneOut) {
  const CachedValidation first = cross_validated(set_path(), cache(), false);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(fs::is_regular_file(cache() / "small.json"));
  const CachedValidation second = cross_validated(set_path(), cache(), false);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.key, first.key);
  EXPECT_DOUBLE_EQ(second.report.loo_mean_abs_error, first.report.loo_mean_abs_error);
  EXPECT_DOUBLE_EQ(second.report.loo_max_abs_error, first.report.loo_max_abs_error);
  // The cached report names the scalar it refits as the run did (Megatron rows: kernel_efficiency), not the
  // default gemm_efficiency the report printed from the cache before.
  EXPECT_EQ(first.report.fitted, "kernel_efficiency");
  EXPECT_EQ(second.report.fitted, first.report.fitted);
  ASSERT_EQ(second.report.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(second.report.rows[i].loo_error, first.report.rows[i].loo_error);
    EXPECT_DOUBLE_EQ(second.report.rows[i].predicted_tflops, first.report.rows[i].predicted_tflops);
  }
  // Asked to, it runs again.
  EXPECT_FALSE(cross_validated(set_path(), cache(), true).from_cache);
}

// The note names the cache relative to the working directory when the cache lies below it (a committed report must
// not carry the checkout's absolute path), and as given otherwise.
TEST_F(ValidationCache, TheNoteNamesTheCacheFromTheWorkingDirectory) {
  cross_validated(set_path(), cache(), false);
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  const std::string below = cross_validated(set_path(), cache(), false).note;
  const std::string rerun = cross_validated(set_path(), cache(), true).note;  // the note of a run that writes it
  fs::current_path(before);
  EXPECT_EQ(below.rfind("leave-one-out errors from cache/small.json (input hash ", 0), 0u) << below;
  EXPECT_EQ(rerun.rfind("leave-one-out run and cached in cache/small.json (input hash ", 0), 0u) << rerun;
  const std::string outside = cross_validated(set_path(), cache(), false).note;
  if (fs::weakly_canonical(dir_).lexically_relative(fs::weakly_canonical(before)).string().rfind("..", 0) == 0) {
    EXPECT_NE(outside.find((cache() / "small.json").generic_string()), std::string::npos) << outside;
  }
}

TEST_F(ValidationCache, AChangedSetIsStale) {
  const CachedValidation first = cross_validated(set_path(), cache(), false);
  write(small_set(140));  // one published figure changed
  const CachedValidation after = cross_validated(set_path(), cache(), false);
  EXPECT_FALSE(after.from_cache);
  EXPECT_NE(after.key, first.key);
  EXPECT_NE(after.note.find("stale"), std::string::npos) << after.note;
}

TEST_F(ValidationCache, NoCacheFolderNoCache) {
  EXPECT_FALSE(cross_validated(set_path(), "", false).from_cache);
  EXPECT_FALSE(fs::exists(cache()));
}

TEST(ValidationSets, OfTheExperimentsGpu) {
  // Every set measured on the GPU, whatever its framework (llm-foundry's MPT sets with PyTorch FSDP beside Megatron's).
  EXPECT_EQ(validation_sets_for(load_cluster("dgx-h100")),
            (std::vector<std::string>{"megatron_core_h100", "mpt_fsdp_h100"}));
  EXPECT_EQ(validation_sets_for(load_cluster("dgx-a100-80gb")),
            (std::vector<std::string>{"mpt_fsdp_a100", "mtnlg_deepspeed_a100", "narayanan2021"}));
  // H200: the H100's peak, more memory: another GPU, no set.
  EXPECT_TRUE(validation_sets_for(load_cluster("dgx-h200")).empty());
  // A profile calibrated on the H100 base keeps its peaks and memory: the H100 set is its set.
  ClusterSpec mine = load_cluster("dgx-h100");
  mine.name = "my-h100";
  mine.collectives.clear();
  mine.gemm_efficiency = 0.7;
  EXPECT_TRUE(same_gpu(mine, load_cluster("dgx-h100")));
  EXPECT_FALSE(same_gpu(mine, load_cluster("dgx-a100-80gb")));
}

}  // namespace
}  // namespace zeropp::search
