#include "microbench/mpi_world.hpp"

namespace zeropp::microbench {

MpiWorld::MpiWorld() {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_);
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node_, &node_rank);
  MPI_Comm_size(node_, &node_size);
  // Each node's first rank counts one node; min == max of the node sizes means a uniform layout.
  const int leader = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(&leader, &nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int smallest = 0, largest = 0;
  MPI_Allreduce(&node_size, &smallest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&node_size, &largest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  ranks_per_node_ = smallest == largest ? node_size : -1;
}

MpiWorld::~MpiWorld() {
  if (node_ != MPI_COMM_NULL) MPI_Comm_free(&node_);
}

double max_over_ranks(double local, MPI_Comm comm) {
  double global = local;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm);
  return global;
}

bool all_ranks_ok(bool ok, MPI_Comm comm) {
  int local = ok ? 1 : 0, global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MIN, comm);
  return global == 1;
}

}  // namespace zeropp::microbench
