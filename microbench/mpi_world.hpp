#pragma once
// The MPI processes a benchmark run spans, and the two reductions every benchmark needs so that ranks agree:
// the slowest rank's time (what a collective or a synchronous step really costs) and whether every rank's
// data check passed (a rank that skipped alone would leave the others waiting in a collective forever).
#include <mpi.h>

namespace zeropp::microbench {

class MpiWorld {
 public:
  MpiWorld();  // needs MPI_Init done; splits MPI_COMM_WORLD into shared-memory nodes
  ~MpiWorld();
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  MPI_Comm world() const { return MPI_COMM_WORLD; }
  MPI_Comm node() const { return node_; }  // the ranks sharing this rank's node
  int rank() const { return rank_; }
  int size() const { return size_; }
  int nodes() const { return nodes_; }
  int ranks_per_node() const { return ranks_per_node_; }  // -1 when nodes hold different rank counts

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, nodes_ = 1, ranks_per_node_ = 1;
};

// The largest `local` over the ranks of `comm`.
double max_over_ranks(double local, MPI_Comm comm);
// True only when `ok` holds on every rank of `comm`.
bool all_ranks_ok(bool ok, MPI_Comm comm);

}  // namespace zeropp::microbench
