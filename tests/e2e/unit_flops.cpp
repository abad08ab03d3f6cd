// The trainer's FLOP count (from the cost model's formulas) against a hand count of this GPT's matmuls.
#include <gtest/gtest.h>

#include "e2e/model/flops.hpp"

namespace zeropp::e2e {
namespace {

TEST(Flops, MatchesHandCountOfTheMatmuls) {
  GptConfig g;
  g.L = 3;
  g.C = 16;
  g.NH = 2;
  g.T = 8;
  g.V = 32;
  g.F = 64;
  const int b = 2;
  const double bt = b * g.T;
  // Multiply-adds per token of the block's linears: qkv 16*48, attproj 16*16, fc 16*64, fcproj 64*16.
  const double lin = 2.0 * bt * (16 * 48 + 16 * 16 + 16 * 64 + 64 * 16);
  // Attention per sequence: Q K^T and P V, each T*T*C multiply-adds.
  const double att = 2.0 * b * (2.0 * g.T * g.T * g.C);
  const double head = 2.0 * bt * g.C * g.V;
  const GptFlops one = microbatch_flops(g, b, 1, false);
  EXPECT_DOUBLE_EQ(one.forward, lin + att);
  EXPECT_DOUBLE_EQ(one.backward_input, lin + 2 * att);
  EXPECT_DOUBLE_EQ(one.backward_weight, lin);
  EXPECT_DOUBLE_EQ(one.total(), 3 * one.forward);  // F + B + W = 3F
  const GptFlops with_head = microbatch_flops(g, b, 2, true);
  EXPECT_DOUBLE_EQ(with_head.forward, 2 * (lin + att) + head);
  EXPECT_DOUBLE_EQ(with_head.backward_input + with_head.backward_weight, 2 * (2 * lin + 2 * att) + 2 * head);
  EXPECT_DOUBLE_EQ(iteration_flops(g, b, 5), 5 * (3 * (3 * (lin + att)) + 3 * head));
}

}  // namespace
}  // namespace zeropp::e2e
