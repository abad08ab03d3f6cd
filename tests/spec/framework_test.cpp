// The framework a plan follows: its JSON key, its default by strategy, the reduce dtype override, the names.
#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/framework.hpp"
#include "cost_model/spec/names.hpp"
#include "cost_model/spec/strategy.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

using nlohmann::json;

Framework framework_of_json(const json& j) { return framework_of(parallel_from_json(j)); }

TEST(Framework, DefaultsByStrategy) {
  EXPECT_EQ(framework_of_json({{"strategy", "3d"}}), Framework::megatron);
  EXPECT_EQ(framework_of_json({{"strategy", "1f1b_zero1"}}), Framework::megatron);
  EXPECT_EQ(framework_of_json({{"strategy", "zero3"}}), Framework::fsdp2);
  EXPECT_EQ(framework_of_json({{"strategy", "zero3_pp"}}), Framework::deepspeed);
  EXPECT_EQ(framework_of_json({{"strategy", "zeropp_a"}}), Framework::zeropp);
  EXPECT_EQ(framework_of_json({{"strategy", "zeropp_b"}}), Framework::zeropp);
  // A plan built in code follows its strategy too.
  ParallelSpec p;
  p.strategy = Strategy::three_d;
  EXPECT_EQ(framework_of(p), Framework::megatron);
  EXPECT_EQ(framework_precision(p).reduce, Dtype::fp32);
}

TEST(Framework, PlanNamesItsOwn) {
  const ParallelSpec p = parallel_from_json({{"strategy", "3d"}, {"framework", "deepspeed"}});
  EXPECT_EQ(framework_of(p), Framework::deepspeed);
  EXPECT_EQ(framework_precision(p).grads, Dtype::bf16);
  const ParallelSpec r = parallel_from_json({{"strategy", "3d"}, {"reduce_dtype", "bf16"}});
  EXPECT_EQ(framework_of(r), Framework::megatron);
  EXPECT_EQ(framework_precision(r).reduce, Dtype::bf16);
  EXPECT_EQ(framework_precision(r).grads, Dtype::bf16);
}

TEST(Framework, UnknownValuesNameTheField) {
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "3d"}, {"framework", "nemo"}}), "parallel.framework",
                    "parallel.framework=\"nemo\" must be one of megatron, deepspeed, fsdp2, zeropp, fsdp1");
  EXPECT_SPEC_ERROR(parallel_from_json({{"strategy", "3d"}, {"reduce_dtype", "fp8"}}), "parallel.reduce_dtype",
                    "parallel.reduce_dtype=\"fp8\" must be one of bf16, fp16, fp32");
  EXPECT_SPEC_ERROR(framework_from_string("Megatron", "experiment.framework"), "experiment.framework",
                    "experiment.framework=\"Megatron\" must be one of megatron, deepspeed, fsdp2, zeropp, fsdp1");
}

// to_json writes the framework and reduce dtype in effect; reading them back gives the same plan, whether they
// were the defaults or not.
TEST(Framework, WrittenAsInEffectAndRoundTrips) {
  const ParallelSpec d = parallel_from_json({{"strategy", "zero3"}});
  EXPECT_EQ(to_json(d)["framework"], "fsdp2");
  EXPECT_EQ(to_json(d)["reduce_dtype"], "fp32");
  EXPECT_EQ(parallel_from_json(to_json(d)), d);
  // Naming the default is the default.
  EXPECT_EQ(parallel_from_json({{"strategy", "zero3"}, {"framework", "fsdp2"}, {"reduce_dtype", "fp32"}}), d);
  const ParallelSpec e =
      parallel_from_json({{"strategy", "zeropp_b"}, {"framework", "megatron"}, {"reduce_dtype", "bf16"}});
  EXPECT_EQ(e.framework, Framework::megatron);
  EXPECT_EQ(e.reduce_dtype, Dtype::bf16);
  EXPECT_EQ(parallel_from_json(to_json(e)), e);
}

TEST(Framework, NamesRoundTrip) {
  for (const Framework f : {Framework::megatron, Framework::deepspeed, Framework::fsdp2, Framework::zeropp})
    EXPECT_EQ(framework_from_string(to_string(f), "parallel.framework"), f);
}

TEST(Framework, ExperimentKey) {
  const json base = {{"model", "gpt3-1.3b"}, {"cluster", "dgx-a100-80gb"}, {"gpus", 16}, {"global_batch", 64}};
  EXPECT_FALSE(experiment_from_json(base).framework.has_value());
  json j = base;
  j["framework"] = "deepspeed";
  const Experiment ex = experiment_from_json(j);
  EXPECT_EQ(ex.framework, Framework::deepspeed);
  EXPECT_EQ(to_json(ex)["framework"], "deepspeed");
  j["framework"] = "apex";
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.framework",
                    "experiment.framework=\"apex\" must be one of megatron, deepspeed, fsdp2, zeropp, fsdp1");
}

}  // namespace
}  // namespace zeropp
