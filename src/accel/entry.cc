// The MPI functions the accelerator takes over (the only symbols it exports,
// accel.map).  Each one takes the call on a communicator set up for it, or
// passes it to the host's PMPI_ function unchanged.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "accel.h"
#include "nodes.h"

namespace shmcoll_accel {
namespace {

bool DoAlltoallv(const void* sb, const int* sc, const int* sd, MPI_Datatype st_, void* rb, const int* rc, const int* rd,
                 MPI_Datatype rt, MPI_Comm comm, bool uniform) {
  CommState* st = TakenOrNodes(comm);
  if (!st) return false;
  const int n = st->n;
  const bool in_place = sb == MPI_IN_PLACE;
  std::vector<Side>&send = st->send_sides, &recv = st->recv_sides;
  send.assign(static_cast<size_t>(n), Side());
  recv.assign(static_cast<size_t>(n), Side());
  bool ok = true;
  for (int j = 0; j < n && ok; ++j) {
    const MPI_Aint rdisp = uniform ? static_cast<MPI_Aint>(j) * rc[0] : rd[j];
    const int rcount = uniform ? rc[0] : rc[j];
    ok = Describe(rb, rdisp, rcount, rt, &recv[j]);
    if (in_place) {
      // the data to send is in the receive buffer, which the call overwrites: copy it first
      ok = ok && Describe(rb, rdisp, rcount, rt, &send[j]);
      send[j].copy = !send[j].packed;
    } else {
      const MPI_Aint sdisp = uniform ? static_cast<MPI_Aint>(j) * sc[0] : sd[j];
      ok = ok && Describe(sb, sdisp, uniform ? sc[0] : sc[j], st_, &send[j]);
    }
  }
  return Alltoall(*st, send, recv, ok, comm, true);
}

bool DoAllgatherv(const void* sb, int sc, MPI_Datatype st_, void* rb, const int* rc, const int* rd, MPI_Datatype rt,
                  MPI_Comm comm, bool uniform) {
  CommState* st = TakenOrNodes(comm);
  if (!st) return false;
  const int n = st->n;
  const bool in_place = sb == MPI_IN_PLACE;
  std::vector<Side>& recv = st->recv_sides;
  recv.assign(static_cast<size_t>(n), Side());
  Side send;
  bool ok = true;
  for (int j = 0; j < n && ok; ++j)
    ok = Describe(rb, uniform ? static_cast<MPI_Aint>(j) * rc[0] : rd[j], uniform ? rc[0] : rc[j], rt, &recv[j]);
  if (ok && in_place) {
    const int me = st->me;
    ok = Describe(rb, uniform ? static_cast<MPI_Aint>(me) * rc[0] : rd[me], uniform ? rc[0] : rc[me], rt, &send);
  } else if (ok) {
    ok = Describe(sb, 0, sc, st_, &send);
  }
  return Allgather(*st, send, recv, in_place, ok, comm, true);
}

}  // namespace
}  // namespace shmcoll_accel

using namespace shmcoll_accel;

// Exported whatever the host's mpi.h says (MPICH's declares no visibility; the
// library is built with hidden visibility and accel.map).
#define ACCEL_EXPORT __attribute__((visibility("default")))

extern "C" {

ACCEL_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
  if (Count(DoAlltoallv(sendbuf, &sendcount, nullptr, sendtype, recvbuf, &recvcount, nullptr, recvtype, comm, true)))
    return MPI_SUCCESS;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

ACCEL_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm) {
  if (Count(DoAlltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false)))
    return MPI_SUCCESS;
  return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

ACCEL_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, MPI_Comm comm) {
  if (Count(DoAllgatherv(sendbuf, sendcount, sendtype, recvbuf, &recvcount, nullptr, recvtype, comm, true)))
    return MPI_SUCCESS;
  return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

ACCEL_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (Count(DoAllgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, false)))
    return MPI_SUCCESS;
  return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

ACCEL_EXPORT int MPI_Barrier(MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);
  if (Count(st && Barrier(*st))) return MPI_SUCCESS;
  return PMPI_Barrier(comm);
}

ACCEL_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);
  bool taken = false;
  if (st) {
    Side side;
    // root is the same on every rank (else the program is erroneous): an invalid one is declined by all
    const bool valid_root = root >= 0 && root < st->n;
    const bool ok = valid_root && Describe(buffer, 0, count, datatype, &side);
    // (the block's bytes are the same on every rank of a correct program: so is the path)
    const size_t eager = st->nodes ? st->nodes->eager : st->eager;
    if (ok && eager && side.bytes <= eager) {
      taken = st->nodes ? HierEagerBcast(*st, side, root, comm) : EagerBcast(*st, side, root, ok, comm);
    } else {
      if (eager && valid_root) {  // (a reader whose broadcaster went eager ends the job)
        if (st->nodes)
          HierEagerCheck(*st, root, comm);
        else if (root != st->me)
          EagerCheck(*st, root, "MPI_Bcast", comm);
      }
      taken = Bcast(*st, side, valid_root ? root : 0, ok, comm);
    }
    if (valid_root && !st->nodes) st->SetLead(root);
  }
  if (Count(taken)) return MPI_SUCCESS;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

ACCEL_EXPORT int MPI_Finalize(void) {
  const char* report = std::getenv("SHMCOLL_ACCEL_REPORT");
  if (report && std::strcmp(report, "0") != 0 && *report) {
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "shmcoll-accel: rank %d: %ld calls taken, %ld passed to the host MPI\n", rank, g_taken.load(),
                 g_passed.load());
    if (std::strcmp(report, "calls") == 0) ReportCalls(rank);
    if (g_across) std::fprintf(stderr, "shmcoll-accel: rank %d: %ld of them across nodes\n", rank, g_across.load());
    if (g_single) std::fprintf(stderr, "shmcoll-accel: rank %d: %ld of them by single copy\n", rank, g_single.load());
    if (g_heap_reads)
      std::fprintf(stderr, "shmcoll-accel: rank %d: %ld blocks read out of the senders' shared heaps\n", rank,
                   g_heap_reads.load());
    if (g_pushed)
      std::fprintf(stderr,
                   "shmcoll-accel: rank %d: %ld calls sent their single-copy blocks through the segment "
                   "(process_vm_readv slow here)\n",
                   rank, g_pushed.load());
    if (g_eager) std::fprintf(stderr, "shmcoll-accel: rank %d: %ld of them eager\n", rank, g_eager.load());
    if (g_direct)
      std::fprintf(stderr, "shmcoll-accel: rank %d: %ld alltoalls with their blocks between nodes direct\n", rank,
                   g_direct.load());
    if (TypesDecoded(true) || TypesDecoded(false))
      std::fprintf(stderr, "shmcoll-accel: rank %d: derived types: %ld decoded, %ld packed by the host\n", rank,
                   TypesDecoded(true), TypesDecoded(false));
    std::fflush(stderr);
  }
  UnmapAll();
  return PMPI_Finalize();
}

}  // extern "C"
