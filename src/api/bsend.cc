// Buffered sends: MPI_Buffer_attach(_c), MPI_Buffer_detach(_c), and the
// buffer the buffered sends of p2p.cc pack into.
//
// A buffered send takes a piece of MPI_BSEND_OVERHEAD + its packed bytes
// from the attached buffer (first fit, in offset order), packs the message
// into it and sends from there as a standard send; the piece is free again
// once that send completed.  MPI_Buffer_detach waits for all of them.
#include "api/bsend.h"

#include <cinttypes>
#include <deque>
#include <limits>

#include "api/check.h"
#include "api/coll_common.h"

namespace shmcoll::api {

namespace {

struct BsendBuffer {
  char* base = nullptr;
  uint64_t size = 0;
  bool attached = false;
  struct Use {
    uint64_t off, len;
    p2p::Request* op;
  };
  std::deque<Use> uses;  // by offset

  void reap() {
    for (auto it = uses.begin(); it != uses.end();) {
      if (it->op->done) {
        p2p::release(it->op);
        it = uses.erase(it);
      } else {
        ++it;
      }
    }
  }
  // First fit; UINT64_MAX when no gap is large enough.
  uint64_t place(uint64_t need, size_t* at) const {
    uint64_t end = 0;
    for (size_t i = 0; i < uses.size(); ++i) {
      if (uses[i].off - end >= need) {
        *at = i;
        return end;
      }
      end = uses[i].off + uses[i].len;
    }
    if (size >= end && size - end >= need) {
      *at = uses.size();
      return end;
    }
    return UINT64_MAX;
  }
};
BsendBuffer gBsend;

bool bsendDrained(void*) {
  gBsend.reap();
  return gBsend.uses.empty();
}

}  // namespace

int bufferedSend(const Call& call, const void* buf, uint64_t count, const dt::Type* type, const p2p::Envelope& env) {
  dt::Cursor cur(buf, count, type);
  const uint64_t bytes = cur.totalBytes();
  const uint64_t need = bytes + MPI_BSEND_OVERHEAD;
  gBsend.reap();
  size_t at = 0;
  uint64_t off = gBsend.place(need, &at);
  if (off == UINT64_MAX) {
    p2p::progress();
    gBsend.reap();
    off = gBsend.place(need, &at);
  }
  if (off == UINT64_MAX) {
    if (!gBsend.attached)
      return check::fail(call, MPI_ERR_BUFFER,
                         "no buffer is attached (MPI_Buffer_attach) for a buffered send of %" PRIu64 " bytes", bytes);
    return check::fail(call, MPI_ERR_BUFFER,
                       "the attached buffer of %" PRIu64 " bytes has no free piece of %" PRIu64 " bytes (%" PRIu64
                       " data + MPI_BSEND_OVERHEAD %d) for this message",
                       gBsend.size, need, bytes, MPI_BSEND_OVERHEAD);
  }
  char* dst = gBsend.base + off + MPI_BSEND_OVERHEAD;
  if (bytes) cur.pack(0, dst, bytes);
  p2p::Request* op = p2p::isend(dst, bytes, byteType(), env, p2p::Mode::kStandard);
  gBsend.uses.insert(gBsend.uses.begin() + static_cast<long>(at), BsendBuffer::Use{off, need, op});
  return MPI_SUCCESS;
}

namespace impl {

template <class C>
int bufferAttach(Call& call, void* buffer, C size) {
  if (gBsend.attached)
    return check::fail(call, MPI_ERR_BUFFER, "a buffer is already attached (detach it with MPI_Buffer_detach first)");
  if (!buffer && size != 0) return check::fail(call, MPI_ERR_BUFFER, "buffer is NULL");
  gBsend.base = static_cast<char*>(buffer);
  gBsend.size = static_cast<uint64_t>(size);
  gBsend.attached = true;
  return MPI_SUCCESS;
}

// Blocks until every message buffered in it has been sent.  A size that does
// not fit an int is MPI_UNDEFINED in the MPI-3 form.
template <class C>
int bufferDetach(Call& call, void* bufferAddr, C* size) {
  if (!gBsend.attached) return check::fail(call, MPI_ERR_BUFFER, "no buffer is attached");
  if (int rc = p2p::waitFor(bsendDrained, nullptr)) return check::fail(call, rc, "the job is ending");
  *static_cast<void**>(bufferAddr) = gBsend.base;
  *size = gBsend.size > static_cast<uint64_t>(std::numeric_limits<C>::max()) ? static_cast<C>(MPI_UNDEFINED)
                                                                              : static_cast<C>(gBsend.size);
  gBsend = BsendBuffer{};
  return MPI_SUCCESS;
}

}  // namespace impl

}  // namespace shmcoll::api

#include "generated/entry_bsend.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/bsend.txt)
