// The ranks one operation runs among, as the transport sees them.
//
// A Group is the members (world ranks, in group rank order), this process's
// rank among them and the context id whose lines in every member's area the
// group owns (segment/layout.h).  coll::Team (a communicator as the engine
// sees it) adds the operation sequence numbers and its caches; the transport
// takes the sequence number of each operation as an argument.
#pragma once

#include <cstdint>
#include <vector>

namespace shmcoll::transport {

struct Group {
  std::vector<uint32_t> members;  // world ranks, in group rank order
  uint32_t rank = 0;              // this process's rank in the group
  uint32_t ctxId = 0;             // context id: its lines in every member's area
  uint32_t size() const { return static_cast<uint32_t>(members.size()); }
};

}  // namespace shmcoll::transport
