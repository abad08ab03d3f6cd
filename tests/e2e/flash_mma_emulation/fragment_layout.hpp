#pragma once
// Which matrix element each lane's register holds, transcribed from the PTX ISA 9.0 ("Matrix Fragments for
// mma.m16n8k16 with floating point type" and "Warp-level matrix load instruction: ldmatrix"), written as the ISA
// writes them and used by the emulator (warp_emulation.cpp) to collect each instruction's operands from the 32 lanes
// and hand out its results. layout_test.cpp checks them against worked examples and that each covers its matrix
// exactly once.
//
// Element e of a fragment is half e % 2 of register e / 2 (the lower-indexed element in the low 16 bits).
// Layout mutations (set by the mutation tests, off otherwise) change one documented fact each, to show that the
// flash kernels' results depend on it, so that a kernel written against a wrong layout fails the emulation.
namespace zeropp::emu {

struct Coord {
  int row, col;
};

enum class LayoutMutation {
  none,
  c_rows_swapped,  // C/D: rows groupID and groupID + 8 exchanged
  a_regs_swapped,  // A: registers a1 and a2 exchanged (row + 8 taken for column + 8)
  trans_ignored,   // ldmatrix .trans loads as without it
};

// Set only between launches (layout_test.cpp's and the mutation runs'); read by every lane.
LayoutMutation& layout_mutation();

// A: 16 x 16 (m x k), 8 elements (a0..a7 in the ISA's numbering: 4 registers of 2) per lane.
inline Coord a_coord(int lane, int e) {
  const int group = lane >> 2, tig = lane % 4;
  if (layout_mutation() == LayoutMutation::a_regs_swapped && (e / 2 == 1 || e / 2 == 2)) e ^= 6;  // reg 1 <-> reg 2
  // row = groupID for a_i with 0 <= i < 2 || 4 <= i < 6, groupID + 8 otherwise;
  // col = threadID_in_group * 2 + (i & 0x1) for i < 4, (threadID_in_group * 2) + (i & 0x1) + 8 for i >= 4.
  const int row = (e < 2 || (e >= 4 && e < 6)) ? group : group + 8;
  const int col = e < 4 ? tig * 2 + (e & 1) : tig * 2 + (e & 1) + 8;
  return {row, col};
}

// B: 16 x 8 (k x n), 4 elements (b0..b3: 2 registers of 2) per lane.
inline Coord b_coord(int lane, int e) {
  const int group = lane >> 2, tig = lane % 4;
  // row = (threadID_in_group * 2) + (i & 0x1) for b_i where i < 2, (threadID_in_group * 2) + (i & 0x1) + 8 for
  // i >= 2; col = groupID.
  const int row = e < 2 ? tig * 2 + (e & 1) : tig * 2 + (e & 1) + 8;
  return {row, group};
}

// C and D: 16 x 8 (m x n) fp32, 4 elements (c0..c3, one per register) per lane.
inline Coord c_coord(int lane, int e) {
  const int group = lane >> 2, tig = lane % 4;
  // row = groupID for c_i where i < 2, groupID + 8 for i >= 2; col = (threadID_in_group * 2) + (i & 0x1).
  bool upper = e < 2;
  if (layout_mutation() == LayoutMutation::c_rows_swapped) upper = !upper;
  return {upper ? group : group + 8, tig * 2 + (e & 1)};
}

// ldmatrix .m8n8 .b16: lane l supplies the address of row l % 8 of matrix l / 8 (.x1: lanes 0-7, .x2: 0-15,
// .x4: all 32; the other lanes' addresses are not used). Register i of every lane receives 2 elements of matrix i:
// without .trans row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (element e of the pair at column 2 (l % 4) + e);
// with .trans (the matrix read column-major) the same positions of the transposed matrix.
inline Coord ldmatrix_coord(int lane, int e, bool trans) {
  const Coord rc{lane / 4, 2 * (lane % 4) + e};
  if (trans && layout_mutation() != LayoutMutation::trans_ignored) return {rc.col, rc.row};
  return rc;
}

}  // namespace zeropp::emu
