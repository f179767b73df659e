// A pair's parts as one run of bytes (transport::Pairs::multiPart): the
// blocks of a neighbourhood collective's repeated edges between two ranks,
// end to end in edge order, packed into or unpacked from a lane or a slot
// stream as if they were one block.
//
// How it works.  The cursor keeps the part it is in, where that part starts
// in the run, and a dt::Cursor over it; a piece [off, off + len) is cut at
// part ends and each slice goes through the part's own cursor, so parts of
// any datatype, empty ones included, mix freely.  Pieces come in increasing
// order (lines of a lane, chunks of a stream); one that starts before the
// current part restarts from the first part.  Cost: one virtual call and one
// dt::Cursor per part entered, nothing per byte beyond the part's own copy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dt/datatype.h"
#include "transport/round.h"

namespace shmcoll::transport {

class PartsCursor {
 public:
  PartsCursor() = default;
  // The send parts (`send`) or the receive parts of `peer` in `a`.
  PartsCursor(const Pairs* a, uint32_t peer, bool send)
      : a_(a), peer_(peer), send_(send), n_(send ? a->sendParts(peer) : a->recvParts(peer)) {
    load();
  }
  // Run bytes [off, off + len) into d.
  void pack(uint64_t off, char* d, uint64_t len) {
    walk(off, len, [d](dt::Cursor& c, uint64_t at, uint64_t done, uint64_t m) { c.pack(at, d + done, m); });
  }
  // len bytes from s into run bytes [off, off + len).
  void unpack(uint64_t off, const char* s, uint64_t len) {
    walk(off, len, [s](dt::Cursor& c, uint64_t at, uint64_t done, uint64_t m) { c.unpack(at, s + done, m); });
  }

 private:
  void load() {
    if (k_ >= n_) {
      bytes_ = 0;
      return;
    }
    const Block b = send_ ? a_->sendPart(peer_, k_) : a_->recvPart(peer_, k_);
    bytes_ = b.bytes();
    cur_ = dt::Cursor(b.buf, b.count, b.type);
  }
  template <class F>
  void walk(uint64_t off, uint64_t len, F&& f) {
    if (off < start_) {
      k_ = 0;
      start_ = 0;
      load();
    }
    for (uint64_t done = 0; done < len;) {
      while (off + done >= start_ + bytes_) {
        if (k_ + 1 >= n_) return;  // (past the last part: the caller bounds pieces by the total)
        start_ += bytes_;
        ++k_;
        load();
      }
      const uint64_t at = off + done - start_;
      const uint64_t m = std::min(len - done, bytes_ - at);
      f(cur_, at, done, m);
      done += m;
    }
  }

  const Pairs* a_ = nullptr;
  uint32_t peer_ = 0;
  bool send_ = false;
  uint32_t n_ = 0, k_ = 0;
  uint64_t start_ = 0, bytes_ = 0;  // part k_ is run bytes [start_, start_ + bytes_)
  dt::Cursor cur_;
};

}  // namespace shmcoll::transport
