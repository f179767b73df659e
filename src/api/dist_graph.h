// MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent: the collective
// part, shared by both (api/dist_graph.cc; the entry points are in
// api/topo.cc).
#pragma once

#include <mpi.h>

#include "api/call.h"
#include "runtime/comm.h"

namespace shmcoll::api::impl {

// The arguments of either form, as given.
struct DistGraphArgs {
  bool adjacentForm = false;
  // MPI_Dist_graph_create: n sources, each with degrees[i] destinations.
  int n = 0;
  const int *sources = nullptr, *degrees = nullptr, *destinations = nullptr, *weights = nullptr;
  // MPI_Dist_graph_create_adjacent (sources and destinations above).
  int indegree = 0, outdegree = 0;
  const int *sourceweights = nullptr, *destweights = nullptr;

  static DistGraphArgs general(int n, const int* sources, const int* degrees, const int* destinations,
                               const int* weights) {
    DistGraphArgs a;
    a.n = n, a.sources = sources, a.degrees = degrees, a.destinations = destinations, a.weights = weights;
    return a;
  }
  static DistGraphArgs adjacent(int indegree, const int* sources, const int* sourceweights, int outdegree,
                                const int* destinations, const int* destweights) {
    DistGraphArgs a;
    a.adjacentForm = true;
    a.indegree = indegree, a.sources = sources, a.sourceweights = sourceweights;
    a.outdegree = outdegree, a.destinations = destinations, a.destweights = destweights;
    return a;
  }
};

// Collective over the intracommunicator c: checks the arguments, routes the
// edges to their ends (general form), checks that every rank's lists agree,
// and makes the new communicator with its MPI_DIST_GRAPH topology.  Every
// rank returns an error if any rank's arguments were wrong or the lists
// disagree (the same one on every rank for a disagreement).
int createDistGraph(Call& call, rt::Comm* c, const DistGraphArgs& a, MPI_Comm* newcomm);

}  // namespace shmcoll::api::impl
