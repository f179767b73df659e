// MPI_Barrier and the five data-moving collectives: argument checks, then one
// call into the engine (coll::exchange) with the arguments as per-peer blocks.
#include <cstring>
#include <vector>

#include "api/api.h"
#include "coll/coll.h"
#include "runtime/comm.h"

using namespace shmcoll;

namespace {

const dt::Type* kByte() {
  static const dt::Type* t = dt::fromHandle(MPI_BYTE);
  return t;
}

// ---- argument checks --------------------------------------------------------

#define CHECK_ARG(expr)             \
  do {                              \
    if (int rc_ = (expr)) return rc_; \
  } while (0)

// One side of the uniform operations: a buffer, and every block `count` elements of `type`.
struct Side {
  const char* buf;
  const dt::Type* type;
  int64_t ext;
};

struct Checker {
  MPI_Comm comm;
  const char* fn;

  int type(const char* arg, MPI_Datatype h, const dt::Type** out) const {
    const dt::Type* t = dt::fromHandle(h);
    if (!t)
      return api::raisef(comm, fn, MPI_ERR_TYPE, "%s = %#x is %s", arg, static_cast<unsigned>(h),
                         h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype");
    if (!t->committed)
      return api::raisef(comm, fn, MPI_ERR_TYPE, "%s is a derived datatype that was not committed (MPI_Type_commit)",
                         arg);
    *out = t;
    return MPI_SUCCESS;
  }
  int count(const char* arg, int n) const {
    if (n < 0) return api::raisef(comm, fn, MPI_ERR_COUNT, "%s = %d is negative", arg, n);
    return MPI_SUCCESS;
  }
  int counts(const char* arg, const int* v, uint32_t n) const {
    if (!v) return api::raisef(comm, fn, MPI_ERR_ARG, "%s is NULL", arg);
    for (uint32_t i = 0; i < n; ++i)
      if (v[i] < 0) return api::raisef(comm, fn, MPI_ERR_COUNT, "%s[%u] = %d is negative", arg, i, v[i]);
    return MPI_SUCCESS;
  }
  int array(const char* arg, const void* v) const {
    if (!v) return api::raisef(comm, fn, MPI_ERR_ARG, "%s is NULL", arg);
    return MPI_SUCCESS;
  }
  // A null buffer is an error when it must hold data; with MPI_BOTTOM and a
  // type of absolute addresses (true lower bound not 0) it is fine.
  int buffer(const char* arg, const void* buf, uint64_t count, const dt::Type* t) const {
    if (!buf && count > 0 && t->size > 0 && t->trueLb == 0)
      return api::raisef(comm, fn, MPI_ERR_BUFFER, "%s is NULL but %llu elements are to be moved", arg,
                         (unsigned long long)count);
    return MPI_SUCCESS;
  }
  int recvNotInPlace(const void* recvbuf) const {
    if (recvbuf == MPI_IN_PLACE)
      return api::raisef(comm, fn, MPI_ERR_BUFFER, "recvbuf = MPI_IN_PLACE is not allowed (only sendbuf may be)");
    return MPI_SUCCESS;
  }
  // The receive side of alltoall/allgather: n blocks of recvcount elements.
  int uniformRecv(const void* recvbuf, int recvcount, MPI_Datatype recvtype, uint32_t n, Side* out) const {
    CHECK_ARG(recvNotInPlace(recvbuf));
    CHECK_ARG(count("recvcount", recvcount));
    CHECK_ARG(type("recvtype", recvtype, &out->type));
    CHECK_ARG(buffer("recvbuf", recvbuf, uint64_t{n} * recvcount, out->type));
    out->buf = static_cast<const char*>(recvbuf);
    out->ext = out->type->extent();
    return MPI_SUCCESS;
  }
  // A send side of `blocks` blocks of sendcount elements (not MPI_IN_PLACE).
  int uniformSend(const void* sendbuf, int sendcount, MPI_Datatype sendtype, uint64_t blocks, Side* out) const {
    CHECK_ARG(count("sendcount", sendcount));
    CHECK_ARG(type("sendtype", sendtype, &out->type));
    CHECK_ARG(buffer("sendbuf", sendbuf, blocks * sendcount, out->type));
    out->buf = static_cast<const char*>(sendbuf);
    out->ext = out->type->extent();
    return MPI_SUCCESS;
  }
  // One side of the v operations: per-peer counts and displacements, one type.
  int vectorSide(const char* bufName, const void* buf, const char* countsName, const int* counts,
                 const char* displsName, const int* displs, const char* typeName, MPI_Datatype t, uint32_t n,
                 Side* out) const {
    CHECK_ARG(this->counts(countsName, counts, n));
    CHECK_ARG(array(displsName, displs));
    CHECK_ARG(type(typeName, t, &out->type));
    for (uint32_t p = 0; p < n; ++p) CHECK_ARG(buffer(bufName, buf, counts[p], out->type));
    out->buf = static_cast<const char*>(buf);
    out->ext = out->type->extent();
    return MPI_SUCCESS;
  }
};

#define COMM_OR_FAIL(c, h, fn)                                                                                    \
  SHMCOLL_REQUIRE(api::active(), api::kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize"); \
  rt::Comm* c = rt::comm(h);                                                                                      \
  SHMCOLL_REQUIRE(c, h, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(h),   \
                  (h) == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "")

// ---- per-peer block descriptions -----------------------------------------------

class AlltoallArgs : public coll::ExchangeArgs {
 public:
  Side s, r;
  uint64_t sc, rc;
  coll::Block send(uint32_t p) const override { return {s.buf + s.ext * static_cast<int64_t>(p * sc), sc, s.type}; }
  coll::Block recv(uint32_t p) const override { return {r.buf + r.ext * static_cast<int64_t>(p * rc), rc, r.type}; }
};

class AlltoallvArgs : public coll::ExchangeArgs {
 public:
  Side s, r;
  const int *scounts, *sdispls, *rcounts, *rdispls;
  coll::Block send(uint32_t p) const override {
    return {s.buf + s.ext * sdispls[p], static_cast<uint64_t>(scounts[p]), s.type};
  }
  coll::Block recv(uint32_t p) const override {
    return {r.buf + r.ext * rdispls[p], static_cast<uint64_t>(rcounts[p]), r.type};
  }
};

class AlltoallwArgs : public coll::ExchangeArgs {
 public:
  const char *sbuf, *rbuf;
  const int *scounts, *sdispls, *rcounts, *rdispls;
  std::vector<const dt::Type*> stypes, rtypes;
  coll::Block send(uint32_t p) const override { return {sbuf + sdispls[p], static_cast<uint64_t>(scounts[p]), stypes[p]}; }
  coll::Block recv(uint32_t p) const override { return {rbuf + rdispls[p], static_cast<uint64_t>(rcounts[p]), rtypes[p]}; }
};

class AllgatherArgs : public coll::ExchangeArgs {
 public:
  Side s, r;
  uint64_t sc, rc;
  const int *rcounts = nullptr, *displs = nullptr;  // allgatherv
  bool inPlace = false;
  uint32_t me = 0;
  coll::Block send(uint32_t) const override { return inPlace ? recv(me) : coll::Block{s.buf, sc, s.type}; }
  coll::Block recv(uint32_t p) const override {
    if (rcounts) return {r.buf + r.ext * displs[p], static_cast<uint64_t>(rcounts[p]), r.type};
    return {r.buf + r.ext * static_cast<int64_t>(p * rc), rc, r.type};
  }
};

// MPI_IN_PLACE for the alltoall family: what each block holds on entry is
// packed into a private buffer first, then sent from there, so a peer never
// reads a block we have already overwritten.
class InPlaceArgs : public coll::ExchangeArgs {
 public:
  InPlaceArgs(const coll::ExchangeArgs& inner, uint32_t n) : inner_(inner) {
    op = inner.op;
    off_.resize(n + 1);
    for (uint32_t p = 0; p < n; ++p) off_[p + 1] = off_[p] + inner.recv(p).bytes();
    data_.resize(off_[n]);
    for (uint32_t p = 0; p < n; ++p) {
      coll::Block b = inner.recv(p);
      dt::Cursor c(b.buf, b.count, b.type);
      c.pack(0, data_.data() + off_[p], b.bytes());
    }
  }
  coll::Block send(uint32_t p) const override { return {data_.data() + off_[p], off_[p + 1] - off_[p], kByte()}; }
  coll::Block recv(uint32_t p) const override { return inner_.recv(p); }

 private:
  const coll::ExchangeArgs& inner_;
  std::vector<uint64_t> off_;
  std::vector<char> data_;
};

int run(rt::Comm* c, const char* fn, const coll::ExchangeArgs& a, bool inPlace) {
  int rc;
  if (inPlace && !a.broadcast) {
    InPlaceArgs ip(a, c->team.size());
    rc = coll::exchange(c->team, ip);
  } else {
    rc = coll::exchange(c->team, a);
  }
  if (rc) return api::raise(c->handle, fn, rc);
  return MPI_SUCCESS;
}

}  // namespace

SHMCOLL_API(int, MPI_Barrier, (MPI_Comm comm)) {
  COMM_OR_FAIL(c, comm, "MPI_Barrier");
  if (int rc = coll::barrier(c->team)) return api::raise(comm, "MPI_Barrier", rc);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Alltoall,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  static const char* fn = "MPI_Alltoall";
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = c->team.size();
  AlltoallArgs a;
  a.op = coll::Op::kAlltoall;
  CHECK_ARG(k.uniformRecv(recvbuf, recvcount, recvtype, n, &a.r));
  a.rc = static_cast<uint64_t>(recvcount);
  if (inPlace) {
    a.s = a.r;
    a.sc = a.rc;
  } else {
    CHECK_ARG(k.uniformSend(sendbuf, sendcount, sendtype, n, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  return run(c, fn, a, inPlace);
}

SHMCOLL_API(int, MPI_Alltoallv,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)) {
  static const char* fn = "MPI_Alltoallv";
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = c->team.size();
  AlltoallvArgs a;
  a.op = coll::Op::kAlltoallv;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.vectorSide("recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, "recvtype", recvtype, n,
                         &a.r));
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  if (inPlace) {
    a.s = a.r;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
  } else {
    CHECK_ARG(k.vectorSide("sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtype", sendtype, n,
                           &a.s));
    a.scounts = sendcounts;
    a.sdispls = sdispls;
  }
  return run(c, fn, a, inPlace);
}

SHMCOLL_API(int, MPI_Alltoallw,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
             void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
             MPI_Comm comm)) {
  static const char* fn = "MPI_Alltoallw";
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = c->team.size();
  AlltoallwArgs a;
  a.op = coll::Op::kAlltoallw;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.counts("recvcounts", recvcounts, n));
  CHECK_ARG(k.array("rdispls", rdispls));
  CHECK_ARG(k.array("recvtypes", recvtypes));
  a.rtypes.resize(n);
  char arg[32];
  for (uint32_t p = 0; p < n; ++p) {
    snprintf(arg, sizeof arg, "recvtypes[%u]", p);
    CHECK_ARG(k.type(arg, recvtypes[p], &a.rtypes[p]));
    CHECK_ARG(k.buffer("recvbuf", recvbuf, recvcounts[p], a.rtypes[p]));
  }
  if (!inPlace) {
    CHECK_ARG(k.counts("sendcounts", sendcounts, n));
    CHECK_ARG(k.array("sdispls", sdispls));
    CHECK_ARG(k.array("sendtypes", sendtypes));
    a.stypes.resize(n);
    for (uint32_t p = 0; p < n; ++p) {
      snprintf(arg, sizeof arg, "sendtypes[%u]", p);
      CHECK_ARG(k.type(arg, sendtypes[p], &a.stypes[p]));
      CHECK_ARG(k.buffer("sendbuf", sendbuf, sendcounts[p], a.stypes[p]));
    }
  }
  a.rbuf = static_cast<const char*>(recvbuf);
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  if (inPlace) {
    a.sbuf = a.rbuf;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
    a.stypes = a.rtypes;
  } else {
    a.sbuf = static_cast<const char*>(sendbuf);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
  }
  return run(c, fn, a, inPlace);
}

SHMCOLL_API(int, MPI_Allgather,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  static const char* fn = "MPI_Allgather";
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = c->team.size();
  AllgatherArgs a;
  a.op = coll::Op::kAllgather;
  a.broadcast = true;
  CHECK_ARG(k.uniformRecv(recvbuf, recvcount, recvtype, n, &a.r));
  a.rc = static_cast<uint64_t>(recvcount);
  if (!inPlace) {
    CHECK_ARG(k.uniformSend(sendbuf, sendcount, sendtype, 1, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.inPlace = inPlace;
  a.me = c->team.rank;
  return run(c, fn, a, inPlace);
}

SHMCOLL_API(int, MPI_Allgatherv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, MPI_Comm comm)) {
  static const char* fn = "MPI_Allgatherv";
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = c->team.size();
  AllgatherArgs a;
  a.op = coll::Op::kAllgatherv;
  a.broadcast = true;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.vectorSide("recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, "recvtype", recvtype, n,
                         &a.r));
  if (!inPlace) {
    CHECK_ARG(k.uniformSend(sendbuf, sendcount, sendtype, 1, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.rcounts = recvcounts;
  a.displs = displs;
  a.inPlace = inPlace;
  a.me = c->team.rank;
  return run(c, fn, a, inPlace);
}
