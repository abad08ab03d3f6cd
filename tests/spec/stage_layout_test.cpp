// The split of the layers over the virtual stages (spec/stage_layout.hpp), against Megatron-LM's rules worked by
// hand (megatron/core/transformer/transformer_block.py get_num_layers_to_build).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "cost_model/spec/stage_layout.hpp"
#include "tests/spec/expect_spec_error.hpp"

namespace zeropp {
namespace {

ModelSpec model(int layers) {
  ModelSpec m;
  m.layers = layers;
  return m;
}

ParallelSpec split(int pp, int v, int first = 0, int last = 0) {
  ParallelSpec p;
  p.pp = pp;
  p.v = v;
  p.first_stage_layers = first;
  p.last_stage_layers = last;
  return p;
}

std::vector<int> stages(const StageLayout& l) {
  std::vector<int> out;
  for (int vs = 0; vs < l.stages(); ++vs) out.push_back(l.stage_layers(vs));
  return out;
}

// Every layer sits in exactly one stage, in stage order: first_layer is the running sum.
void expect_consistent(const StageLayout& l, int layers) {
  int next = 0;
  for (int vs = 0; vs < l.stages(); ++vs) {
    EXPECT_EQ(l.first_layer(vs), next) << "stage " << vs;
    next += l.stage_layers(vs);
  }
  EXPECT_EQ(next, layers);
  EXPECT_EQ(l.total_layers(), layers);
  int ranks = 0, most = 0;
  for (int r = 0; r < l.pp; ++r) {
    int sum = 0;
    for (int c = 0; c < l.v; ++c) sum += l.stage_layers(c * l.pp + r);
    EXPECT_EQ(l.rank_layers(r), sum) << "rank " << r;
    ranks += sum;
  }
  for (int vs = 0; vs < l.stages(); ++vs) most = std::max(most, l.stage_layers(vs));
  EXPECT_EQ(ranks, layers);
  EXPECT_EQ(l.max_stage_layers(), most);
}

TEST(StageLayout, EvenWhenTheStagesDivideTheLayers) {
  const StageLayout l = stage_layout(model(32), split(4, 2));
  EXPECT_TRUE(l.even());
  EXPECT_EQ(stages(l), std::vector<int>(8, 4));
  expect_consistent(l, 32);
  EXPECT_EQ(describe(l), "even: 4 x 8");  // 8 virtual stages of 4 layers
}

// Llama 3.1 405B, 126 layers on pp = 16: Megatron's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split give (126 + 2)/16 = 8 per rank and one fewer on the first and the last.
TEST(StageLayout, Llama405bOnSixteenStagesCountsTheEmbeddingAndTheLoss) {
  const StageLayout l = stage_layout(model(126), split(16, 1));
  EXPECT_EQ(l.kind, LayoutKind::accounted);
  std::vector<int> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(stages(l), want);
  expect_consistent(l, 126);
  EXPECT_EQ(describe(l), "embedding and loss counted: 7, 8 x 14, 7");
  // With v = 8 (one layer per chunk) the first chunk of rank 0 would hold only the embedding and the last chunk
  // of rank 15 only the head, as Megatron allows; the trainer's chunks hold a layer or more, so it is refused.
  EXPECT_SPEC_ERROR(stage_layout(model(126), split(16, 8)), "parallel.v",
                    "parallel.pp*parallel.v=16*8=128 stages over model.layers+2=128 (the embedding and the loss "
                    "counted as layers) leave the first and the last stage without a transformer layer: every stage "
                    "holds at least one");
  // v = 2: 4 per chunk, 3 on the first and the last virtual stage.
  const StageLayout v2 = stage_layout(model(126), split(16, 2));
  EXPECT_EQ(v2.stage_layers(0), 3);
  EXPECT_EQ(v2.stage_layers(16), 4);
  EXPECT_EQ(v2.stage_layers(31), 3);
  EXPECT_EQ(v2.first_layer(16), 3 + 15 * 4);
  expect_consistent(v2, 126);
}

TEST(StageLayout, ExplicitFirstAndLastStageLayers) {
  // 126 = 6 + 14 x 8 + 8 on pp = 16.
  const StageLayout l = stage_layout(model(126), split(16, 1, 6, 8));
  EXPECT_EQ(l.kind, LayoutKind::explicit_counts);
  EXPECT_EQ(l.rank_layers(0), 6);
  EXPECT_EQ(l.rank_layers(7), 8);
  EXPECT_EQ(l.rank_layers(15), 8);
  expect_consistent(l, 126);
  EXPECT_EQ(describe(l), "first/last stage layers: 6, 8 x 15");
  // Only the first given: the other ranks share the rest (Megatron: the last rank is one of them).
  const StageLayout first_only = stage_layout(model(10), split(4, 1, 1));
  EXPECT_EQ(stages(first_only), (std::vector<int>{1, 3, 3, 3}));
  expect_consistent(first_only, 10);
  // Only the last given, with chunks (v = 2): 12 = 2 x 4 + 4, two layers per chunk everywhere.
  const StageLayout last_only = stage_layout(model(12), split(3, 2, 0, 4));
  EXPECT_EQ(stages(last_only), (std::vector<int>{2, 2, 2, 2, 2, 2}));
  const StageLayout v2 = stage_layout(model(14), split(3, 2, 4, 2));
  EXPECT_EQ(stages(v2), (std::vector<int>{2, 4, 1, 2, 4, 1}));
  expect_consistent(v2, 14);
  // pp = 2: the two counts make up the model.
  EXPECT_EQ(stages(stage_layout(model(5), split(2, 1, 3, 2))), (std::vector<int>{3, 2}));
  EXPECT_EQ(stages(stage_layout(model(5), split(2, 1, 3))), (std::vector<int>{3, 2}));
}

TEST(StageLayout, BadSplitsNameTheOptionAndTheRule) {
  EXPECT_SPEC_ERROR(stage_layout(model(32), split(3, 1)), "parallel.pp",
                    "parallel.pp=3 does not divide model.layers=32 (nor model.layers+2=34 with the embedding and the "
                    "loss counted as layers): set parallel.first_stage_layers and/or parallel.last_stage_layers");
  EXPECT_SPEC_ERROR(stage_layout(model(32), split(4, 3)), "parallel.v",
                    "parallel.pp*parallel.v=4*3=12 does not divide model.layers=32 (nor model.layers+2=34 with the "
                    "embedding and the loss counted as layers): set parallel.first_stage_layers and/or "
                    "parallel.last_stage_layers");
  // A rank holding only the embedding (126 + 2 = 128 = 128 x 1) is refused.
  EXPECT_SPEC_ERROR(stage_layout(model(126), split(128, 1)), "parallel.pp",
                    "parallel.pp*parallel.v=128*1=128 stages over model.layers+2=128 (the embedding and the loss "
                    "counted as layers) leave the first and the last stage without a transformer layer: every stage "
                    "holds at least one");
  EXPECT_SPEC_ERROR(stage_layout(model(10), split(4, 1, 11)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers=11 leaves no layer for the other 3 pipeline stage(s) of "
                    "model.layers=10");
  EXPECT_SPEC_ERROR(stage_layout(model(10), split(4, 1, 0, 10)), "parallel.last_stage_layers",
                    "parallel.last_stage_layers=10 leaves no layer for the other 3 pipeline stage(s) of "
                    "model.layers=10");
  EXPECT_SPEC_ERROR(stage_layout(model(10), split(4, 1, 5, 4)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers + parallel.last_stage_layers = 5 + 4 leaves 1 of model.layers=10 "
                    "for the other 2 pipeline stage(s): a stage would be empty");
  EXPECT_SPEC_ERROR(stage_layout(model(10), split(4, 1, 2, 3)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers + parallel.last_stage_layers = 2 + 3 leaves 5 layers, which the "
                    "other 2 pipeline stage(s) cannot share evenly");
  EXPECT_SPEC_ERROR(stage_layout(model(12), split(3, 2, 3)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers=3 is not a multiple of parallel.v=2: each of the stage's chunks "
                    "holds the same number of layers");
  EXPECT_SPEC_ERROR(stage_layout(model(14), split(4, 2, 2, 2)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers + parallel.last_stage_layers = 2 + 2 leaves 5 layers per other "
                    "pipeline stage, not a multiple of parallel.v=2");
  EXPECT_SPEC_ERROR(stage_layout(model(5), split(2, 1, 2, 2)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers + parallel.last_stage_layers = 2 + 2 must equal model.layers=5 "
                    "when parallel.pp=2 (no other stage)");
  EXPECT_SPEC_ERROR(stage_layout(model(5), split(1, 1, 2)), "parallel.first_stage_layers",
                    "parallel.first_stage_layers=2 needs parallel.pp >= 2 (a pipeline with a first and a last "
                    "stage)");
}

// Every accepted split of small models is consistent (stage order, sums, ranks), whatever the kind.
TEST(StageLayout, EveryAcceptedSplitIsConsistent) {
  int accepted = 0;
  for (int L = 1; L <= 14; ++L)
    for (int pp = 1; pp <= 6; ++pp)
      for (int v = 1; v <= 3; ++v)
        for (int first = 0; first <= L; ++first)
          for (int last = 0; last <= L; ++last) {
            StageLayout l;
            try {
              l = stage_layout(model(L), split(pp, v, first, last));
            } catch (const SpecError&) {
              continue;
            }
            ++accepted;
            expect_consistent(l, L);
            for (int vs = 0; vs < l.stages(); ++vs) EXPECT_GE(l.stage_layers(vs), 1) << L << " " << pp << " " << v;
            if (first > 0) {
              EXPECT_EQ(l.rank_layers(0), first);
            }
            if (last > 0) {
              EXPECT_EQ(l.rank_layers(pp - 1), last);
            }
          }
  EXPECT_GT(accepted, 300);
}

}  // namespace
}  // namespace zeropp
