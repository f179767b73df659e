// The ranks one operation runs among, as the transport sees them.
//
// A Group is the members (world ranks, in group rank order), this process's
// rank among them, the communicator's context id (what its messages match
// on) and the set of lines in every member's area it owns (segment/layout.h),
// which the transport runs on.  Communicators outnumber the line sets a
// segment holds: one without (kNoLines) never reaches the transport (its
// blocking collectives run as schedules, coll/dispatch.cc).  coll::Team (a communicator as the engine
// sees it) adds the operation sequence numbers and its caches; the transport
// takes the sequence number of each operation as an argument.
#pragma once

#include <cstdint>
#include <vector>

namespace shmcoll::transport {

struct Group {
  std::vector<uint32_t> members;  // world ranks, in group rank order
  uint32_t rank = 0;              // this process's rank in the group
  uint32_t ctxId = 0;             // context id: messages on it match only receives on it
  uint32_t lines = 0;             // its line set in every member's area (< segment::kMaxContexts), or kNoLines
  static constexpr uint32_t kNoLines = UINT32_MAX;
  bool hasLines() const { return lines != kNoLines; }
  uint32_t size() const { return static_cast<uint32_t>(members.size()); }
};

}  // namespace shmcoll::transport
