// The compact loop description of a type map (the engine's "dataloop").
//
// A type's data is a tree of immutable nodes, shared between types by
// shared_ptr (a vector of T points at T's tree, it does not copy it):
//
//   Leaf  `size` contiguous bytes at the node's origin.
//   Vec   `count` copies of `child`, copy i at origin + i*stride.  A vector of
//         a million doubles is one Vec over one 8-byte Leaf, never a million
//         blocks.
//   List  children at their own displacements, in stream order, with the
//         stream offset where each starts (binary search to seek).
//
// Every node has a displacement `disp` from its parent's origin; the stream
// of a node is its children's streams concatenated.  The builders normalise
// as they go (count-1 vectors vanish, a vector of abutting leaves becomes one
// leaf, vector-of-vector with matching strides folds into one, abutting list
// leaves merge, a list of equal leaves at a constant spacing becomes a Vec),
// so a subarray face or a vector of a contiguous type ends as one Vec of one
// Leaf and the walker can use its fixed-size loops.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dt/datatype.h"

namespace shmcoll::dt {

struct Node;
using NodeP = std::shared_ptr<const Node>;

struct Node {
  enum Kind : uint8_t { kLeaf, kVec, kList };
  Kind kind = kLeaf;
  // List: every child is a Leaf (a struct of scalars): the walker moves a
  // batch of elements one field at a time (dt/cursor.cc), from `fields`.
  bool flatLeaves = false;
  int64_t disp = 0;
  uint64_t size = 0;  // stream bytes
  int64_t lo = 0, hi = 0;  // bytes touched, relative to the node's origin (disp not included)
  uint64_t runs = 0;       // contiguous runs in the stream (upper bound: no merging across nodes)

  // Vec
  uint64_t count = 0;
  int64_t stride = 0;
  NodeP child;

  // List
  std::vector<NodeP> kids;
  std::vector<uint64_t> start;  // start[i] = stream offset of kids[i]; start.back() = size
  struct Field {
    int64_t disp;  // from the node's origin
    uint64_t len;
    uint64_t at;   // stream offset within the node's stream
  };
  std::vector<Field> fields;  // flatLeaves: one per kid, in stream order
};

// Builders (all return nullptr for an empty stream).
NodeP leaf(int64_t disp, uint64_t size);
NodeP vec(int64_t disp, uint64_t count, int64_t stride, NodeP child);
NodeP list(std::vector<std::pair<int64_t, NodeP>> kids);  // (disp, node) in stream order
NodeP shifted(const NodeP& n, int64_t by);

// Appends the runs of `n` (origin at `org`) to out, merging abutting runs;
// returns false (out incomplete) when more than `limit` runs would be needed.
bool flatten(const Node& n, int64_t org, std::vector<Block>& out, size_t limit);

}  // namespace shmcoll::dt
