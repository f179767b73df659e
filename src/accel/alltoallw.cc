// MPI_Alltoallw (over several nodes, the hierarchical alltoall of
// hier_alltoall.cc, with the same sides): on one node, each peer's block is described with its own
// datatype at a displacement in bytes, then moved by the alltoall(v) rounds
// of engine.cc (a half-slot holds n pieces, piece j for rank j; blocks longer
// than a piece go in several rounds), with the same costs: (n-1) blocks in
// and out per rank, each byte copied twice.  Blocks of derived types are
// packed and unpacked by the host (datatype.cc); MPI_IN_PLACE takes the data
// to send from the receive buffer, copied first; a block the accelerator
// cannot describe makes every rank decline the call together in round 0.
#include "accel.h"

using namespace shmcoll_accel;

extern "C" {

__attribute__((visibility("default"))) int MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                                                         const int sdispls[], const MPI_Datatype sendtypes[],
                                                         void* recvbuf, const int recvcounts[], const int rdispls[],
                                                         const MPI_Datatype recvtypes[], MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);  // (over several nodes: hier_alltoall.cc)
  bool taken = false;
  if (st) {
    const int n = st->n;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    std::vector<Side>&send = st->send_sides, &recv = st->recv_sides;
    send.assign(static_cast<size_t>(n), Side());
    recv.assign(static_cast<size_t>(n), Side());
    bool ok = recvcounts && rdispls && recvtypes && (in_place || (sendcounts && sdispls && sendtypes));
    for (int j = 0; j < n && ok; ++j) {
      ok = Describe(static_cast<char*>(recvbuf) + rdispls[j], 0, recvcounts[j], recvtypes[j], &recv[j]);
      if (in_place) {
        // the data to send is in the receive buffer, which the call overwrites: copy it first
        ok = ok && Describe(static_cast<char*>(recvbuf) + rdispls[j], 0, recvcounts[j], recvtypes[j], &send[j]);
        send[j].copy = !send[j].packed;
      } else {
        ok = ok && Describe(static_cast<const char*>(sendbuf) + sdispls[j], 0, sendcounts[j], sendtypes[j], &send[j]);
      }
    }
    taken = Alltoall(*st, send, recv, ok, comm, true);
  }
  if (Count(taken)) return MPI_SUCCESS;
  return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

}  // extern "C"
