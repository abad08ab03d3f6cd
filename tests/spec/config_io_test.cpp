// Files: JSON with comments, parse errors with positions, plans and experiments, and the zoo on disk.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <limits>

#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/limits.hpp"
#include "cost_model/spec/names.hpp"
#include "tests/spec/expect_spec_error.hpp"
#include "tests/spec/scratch_dir.hpp"

namespace zeropp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A scratch directory per test, removed afterwards.
class ConfigFiles : public ScratchDir {};

TEST(ParseJson, AcceptsBothCommentStyles) {
  const json j = parse_json_with_comments("// line\n{ /* block */ \"a\": 1, // trailing\n \"b\": [2] }", "t.json");
  EXPECT_EQ(j.at("a"), 1);
  EXPECT_EQ(j.at("b").at(0), 2);
}

TEST(ParseJson, MalformedJsonNamesFileLineAndColumn) {
  EXPECT_SPEC_ERROR(parse_json_with_comments("{\n  \"a\": 1,\n  \"b\": }\n", "bad.json"), "",
                    "bad.json:3:8: invalid JSON: syntax error while parsing value - unexpected '}'; expected '[', "
                    "'{', or a literal");
  EXPECT_SPEC_ERROR(parse_json_with_comments("{\"a\": 1", "cut.json"), "",
                    "cut.json:1:7: invalid JSON: syntax error while parsing object - unexpected end of input; "
                    "expected '}'");
}

TEST(ParseJson, RejectsDuplicateKeys) {
  EXPECT_SPEC_ERROR(parse_json_with_comments("{\"a\": {\"x\": 1, \"x\": 2}}", "dup.json"), "",
                    "dup.json: duplicate key \"x\"");
  // The same key in two different objects is fine.
  EXPECT_NO_THROW(parse_json_with_comments("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}, \"x\": 3}", "ok.json"));
}

TEST(Zoo, ListsTheModelsOfTheIssue) {
  // gpt2, llama3-*, qwen2-*: HuggingFace config.json files (cost_model/spec/hf_config.hpp).
  const std::vector<std::string> expected = {
      "gpt2",           "gpt3-1.3b",        "gpt3-13b",        "gpt3-175b",       "gpt3-2.7b",
      "gpt3-6.7b",      "llama2-13b",       "llama2-70b",      "llama2-7b",       "llama3-70b",
      "llama3-8b",      "llama3.1-405b",    "megatron-1.7b",    "megatron-145.6b", "megatron-18.4b",  "megatron-1t",
      "megatron-3.6b",  "megatron-310.1b",  "megatron-39.1b",  "megatron-529.6b", "megatron-7.5b",
      "megatron-76.1b", "qwen2-7b-instruct"};
  EXPECT_EQ(zoo_models(), expected);
  const std::vector<std::string> clusters = zoo_clusters();
  for (const char* name : {"dgx-a100-80gb", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72"})
    EXPECT_TRUE(std::find(clusters.begin(), clusters.end(), name) != clusters.end()) << name;
  EXPECT_TRUE(std::is_sorted(clusters.begin(), clusters.end()));
}

TEST(Zoo, EveryFileLoadsValidatesAndIsNamedAfterItsFile) {
  for (const auto& name : zoo_models()) {
    SCOPED_TRACE(name);
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.name, name);
    EXPECT_EQ(model_from_json(to_json(m)), m);
  }
  for (const auto& name : zoo_clusters()) {
    SCOPED_TRACE(name);
    const ClusterSpec c = load_cluster(name);
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(cluster_from_json(to_json(c)), c);
  }
  for (const auto& name : zoo_experiments()) {
    SCOPED_TRACE(name);
    const Experiment e = load_experiment(name);
    EXPECT_EQ(e.name, name);
    EXPECT_EQ(experiment_from_json(to_json(e)), e);
  }
}

// Spot checks against the sources named in the files (Brown et al. Table 2.1, Narayanan et al. Table 1, the
// Llama 2 HF configs) and the spec sheets.
TEST(Zoo, ShapesMatchTheirSources) {
  const ModelSpec gpt175 = load_model("gpt3-175b");
  EXPECT_EQ(gpt175.layers, 96);
  EXPECT_EQ(gpt175.hidden, 12288);
  EXPECT_EQ(gpt175.heads, 96);
  EXPECT_EQ(gpt175.ffn(), 4 * 12288);
  const ModelSpec mt = load_model("megatron-529.6b");
  EXPECT_EQ(mt.layers, 105);
  EXPECT_EQ(mt.hidden, 20480);
  EXPECT_EQ(mt.heads, 128);
  EXPECT_EQ(mt.vocab, 51200);
  const ModelSpec l7 = load_model("llama2-7b");
  EXPECT_EQ(l7.ffn(), 11008);
  ModelSpec by_rule = l7;
  by_rule.ffn_hidden = 0;
  EXPECT_EQ(by_rule.ffn(), l7.ffn());  // the stated size is the rule's
  const ModelSpec l13 = load_model("llama2-13b");
  by_rule = l13;
  by_rule.ffn_hidden = 0;
  EXPECT_EQ(by_rule.ffn(), 13824);
  EXPECT_EQ(l13.ffn(), 13824);
  const ModelSpec l70 = load_model("llama2-70b");
  EXPECT_EQ(l70.ffn(), 28672);
  EXPECT_EQ(l70.kv_heads_or_heads(), 8);
  EXPECT_FALSE(l70.tied_embedding);
  EXPECT_FALSE(l70.learned_positions);

  const ClusterSpec a100 = load_cluster("dgx-a100-80gb");
  EXPECT_EQ(a100.peak(Dtype::bf16), 312e12);
  EXPECT_EQ(a100.memory_bytes, 81920.0 * 1024 * 1024);
  EXPECT_EQ(a100.inter.bandwidth, 200e9 / 8);  // one 200 Gb/s HDR NIC per GPU
  const ClusterSpec h100 = load_cluster("dgx-h100");
  EXPECT_EQ(h100.peak(Dtype::bf16), 989e12);
  EXPECT_EQ(h100.memory_bytes, 81559.0 * 1024 * 1024);
  EXPECT_EQ(h100.intra.bandwidth, 900e9 / 2);
  EXPECT_EQ(h100.inter.bandwidth, 400e9 / 8);
  EXPECT_EQ(h100.memory_bandwidth, 3.35e12);
  EXPECT_EQ(load_cluster("dgx-h200").memory_bytes, 143771.0 * 1024 * 1024);
  EXPECT_EQ(load_cluster("dgx-h200").memory_bandwidth, 4.8e12);
}

TEST(Zoo, DefaultExperimentIsGpt3_13bOn64A100) {
  const Experiment e = load_experiment(default_experiment_name());
  EXPECT_EQ(e.model.name, "gpt3-13b");
  EXPECT_EQ(e.cluster.name, "dgx-a100-80gb");
  EXPECT_EQ(e.gpus, 64);
  EXPECT_EQ(e.global_batch, 256);
  EXPECT_EQ(e.dtype, Dtype::bf16);
  EXPECT_TRUE(e.strategies.empty());
}

TEST(Zoo, UnknownNameListsTheZoo) {
  try {
    load_model("gpt3-14b");
    ADD_FAILURE() << "no error";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "model");
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("model=\"gpt3-14b\" is not in the zoo (", 0), 0u) << what;
    EXPECT_NE(what.find("; known: gpt2, gpt3-1.3b, gpt3-13b,"), std::string::npos) << what;
  }
}

TEST_F(ConfigFiles, ConfigsDirFollowsTheEnvironment) {
  write("models/tiny.json", R"({"layers": 2, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 100})");
  ASSERT_EQ(::setenv("ZEROPP_CONFIGS", dir_.c_str(), 1), 0);
  const fs::path found = configs_dir();
  const auto models = zoo_models();
  const ModelSpec tiny = load_model("tiny");
  ::unsetenv("ZEROPP_CONFIGS");
  EXPECT_EQ(found, dir_);
  EXPECT_EQ(models, std::vector<std::string>{"tiny"});
  EXPECT_EQ(tiny.name, "tiny");  // a file without "name" is named after itself
  EXPECT_TRUE(fs::is_directory(configs_dir() / "models"));
}

TEST_F(ConfigFiles, FileErrorsNameTheFile) {
  const fs::path bad = write("bad.json", R"({"layers": 32, "hidden": 4096, "heads": 7, "seq_len": 2048,
                                            "vocab": 51200})");
  EXPECT_SPEC_ERROR(load_model(bad.string()), "model.heads",
                    bad.string() + ": model.heads=7 does not divide model.hidden=4096");
  EXPECT_SPEC_ERROR(load_model((dir_ / "missing.json").string()), "model",
                    "model: file \"" + (dir_ / "missing.json").string() + "\" not found");
}

TEST_F(ConfigFiles, PlanResolvesZooNamesAndRelativePaths) {
  write("m/tiny.json", R"({"name": "tiny", "layers": 8, "hidden": 64, "heads": 4, "seq_len": 16, "vocab": 100})");
  const fs::path plan_path = write("plan.json", R"({
    // a relative path is taken from the plan's own directory
    "model": "m/tiny.json",
    "cluster": "dgx-h100",
    "parallel": {"strategy": "zeropp_b", "z": 8, "pp": 4, "dp": 2, "micro_batches": 8, "unit": 2}
  })");
  const Plan plan = load_plan(plan_path.string());
  EXPECT_EQ(plan.model.name, "tiny");
  EXPECT_EQ(plan.cluster.name, "dgx-h100");
  EXPECT_EQ(plan.parallel.world(), 64);
  EXPECT_EQ(plan_from_json(to_json(plan)), plan);

  const fs::path bad_world = write("big.json", R"({"model": "m/tiny.json", "cluster": "dgx-h100",
    "parallel": {"strategy": "zeropp_b", "z": 8, "pp": 8, "dp": 32}})");
  EXPECT_SPEC_ERROR(load_plan(bad_world.string()), "parallel",
                    bad_world.string() +
                        ": parallel: world tp*z*pp*dp=2048 exceeds the cluster's 1024 GPUs (cluster.nodes=128 x "
                        "cluster.gpus_per_node=8)");
  const fs::path typo = write("typo.json", R"({"model": "m/tiny.json", "cluster": "dgx-h100", "paralel": {}})");
  EXPECT_SPEC_ERROR(load_plan(typo.string()), "plan.paralel",
                    typo.string() + ": plan.paralel: unknown key (allowed: model, cluster, parallel)");
}

TEST_F(ConfigFiles, ExperimentRules) {
  const json base = {{"model", "gpt3-13b"}, {"cluster", "dgx-a100-80gb"}, {"gpus", 64}, {"global_batch", 256}};
  json j = base;
  j["gpus"] = 4096;
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.gpus",
                    "experiment.gpus=4096 exceeds the cluster's 3072 GPUs (cluster.nodes=384 x "
                    "cluster.gpus_per_node=8)");
  j = base;
  j["gpus"] = 0;
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.gpus", "experiment.gpus=0 must be >= 1");
  j = base;
  j["global_batch"] = 0;
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.global_batch", "experiment.global_batch=0 must be >= 1");
  j = base;
  j["strategies"] = {"zeropp_a", "3d", "zeropp_a"};
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.strategies[2]",
                    "experiment.strategies[2]=\"zeropp_a\" is already listed at [0]");
  j = base;
  j["strategies"] = {"zeropp_c"};
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.strategies[0]",
                    "experiment.strategies[0]=\"zeropp_c\" must be one of 3d, zero3, 1f1b_zero1, zero3_pp, "
                    "zeropp_a, zeropp_b");
  j = base;
  j["model"] = 13;
  EXPECT_SPEC_ERROR(experiment_from_json(j), "model",
                    "model: expected a zoo name, a file path or an object, got number 13");
  j = base;
  j["strategies"] = {"3d", "zeropp_b"};
  j["model"] = to_json(load_model("llama2-7b"));  // inline objects work as well as names
  const Experiment e = experiment_from_json(j);
  EXPECT_EQ(e.strategies, (std::vector<Strategy>{Strategy::three_d, Strategy::zeropp_b}));
  EXPECT_EQ(e.model.name, "llama2-7b");
}

TEST_F(ConfigFiles, ExperimentGlobalBatchIsBounded) {
  const json j = {{"model", "gpt3-13b"},
                  {"cluster", "dgx-a100-80gb"},
                  {"gpus", 64},
                  {"global_batch", std::numeric_limits<long long>::max()}};
  EXPECT_SPEC_ERROR(experiment_from_json(j), "experiment.global_batch",
                    "experiment.global_batch=9223372036854775807 exceeds the limit 4294967296");
}

}  // namespace
}  // namespace zeropp
