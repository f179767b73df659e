// Builders and normalisation of the loop description (see dt/node.h).
#include "dt/node.h"

#include <algorithm>

namespace shmcoll::dt {

namespace {

constexpr size_t kSpliceMax = 16;      // a nested list this short is spliced into its parent
constexpr size_t kFlatLeavesMax = 64;  // lists of leaves up to this many get the struct kernel

std::shared_ptr<Node> clone(const Node& n) { return std::make_shared<Node>(n); }

// Same stream and memory shape, displacement aside.
bool sameShape(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.size != b.size) return false;
  switch (a.kind) {
    case Node::kLeaf:
      return true;
    case Node::kVec:
      return a.count == b.count && a.stride == b.stride &&
             (a.child == b.child || (a.child->disp == b.child->disp && sameShape(*a.child, *b.child)));
    case Node::kList:
      if (a.kids.size() != b.kids.size()) return false;
      for (size_t i = 0; i < a.kids.size(); ++i)
        if (a.kids[i] != b.kids[i] &&
            (a.kids[i]->disp != b.kids[i]->disp || !sameShape(*a.kids[i], *b.kids[i])))
          return false;
      return true;
  }
  return false;
}

}  // namespace

NodeP leaf(int64_t disp, uint64_t size) {
  if (size == 0) return nullptr;
  auto n = std::make_shared<Node>();
  n->kind = Node::kLeaf;
  n->disp = disp;
  n->size = size;
  n->lo = 0;
  n->hi = static_cast<int64_t>(size);
  n->runs = 1;
  return n;
}

NodeP shifted(const NodeP& n, int64_t by) {
  if (!n || by == 0) return n;
  auto c = clone(*n);
  c->disp += by;
  return c;
}

NodeP vec(int64_t disp, uint64_t count, int64_t stride, NodeP child) {
  if (!child || count == 0) return nullptr;
  if (count == 1) return shifted(child, disp);
  const Node& c = *child;
  // A vector of abutting runs is one run.
  if (c.kind == Node::kLeaf && stride == static_cast<int64_t>(c.size)) return leaf(disp + c.disp, count * c.size);
  // vector(n, m*s, vector(m, s, X)) is vector(n*m, s, X).
  if (c.kind == Node::kVec && stride == static_cast<int64_t>(c.count) * c.stride)
    return vec(disp + c.disp, count * c.count, c.stride, c.child);
  auto n = std::make_shared<Node>();
  n->kind = Node::kVec;
  n->disp = disp;
  n->count = count;
  n->stride = stride;
  n->size = count * c.size;
  const int64_t span = static_cast<int64_t>(count - 1) * stride;
  n->lo = c.disp + c.lo + std::min<int64_t>(0, span);
  n->hi = c.disp + c.hi + std::max<int64_t>(0, span);
  n->runs = count * c.runs;
  n->child = std::move(child);
  return n;
}

NodeP list(std::vector<std::pair<int64_t, NodeP>> in) {
  // Drop empty entries, splice short nested lists, merge abutting leaves.
  std::vector<NodeP> kids;
  kids.reserve(in.size());
  auto push = [&](NodeP k) {
    if (!kids.empty()) {
      const Node& p = *kids.back();
      if (p.kind == Node::kLeaf && k->kind == Node::kLeaf && p.disp + static_cast<int64_t>(p.size) == k->disp) {
        kids.back() = leaf(p.disp, p.size + k->size);
        return;
      }
    }
    kids.push_back(std::move(k));
  };
  for (auto& [d, n] : in) {
    if (!n) continue;
    if (n->kind == Node::kList && n->kids.size() <= kSpliceMax) {
      const int64_t by = d + n->disp;
      for (const NodeP& k : n->kids) push(shifted(k, by));
    } else {
      push(shifted(n, d));
    }
  }
  if (kids.empty()) return nullptr;
  if (kids.size() == 1) return kids[0];

  // Equal children at a constant spacing: a vector.
  {
    const int64_t step = kids[1]->disp - kids[0]->disp;
    bool regular = true;
    for (size_t i = 1; i < kids.size() && regular; ++i)
      regular = kids[i]->disp - kids[i - 1]->disp == step && sameShape(*kids[i], *kids[0]);
    if (regular) {
      const int64_t d0 = kids[0]->disp;
      return vec(d0, kids.size(), step, shifted(kids[0], -d0));
    }
  }

  auto n = std::make_shared<Node>();
  n->kind = Node::kList;
  n->start.reserve(kids.size() + 1);
  uint64_t off = 0;
  bool allLeaves = true;
  n->lo = INT64_MAX;
  n->hi = INT64_MIN;
  for (const NodeP& k : kids) {
    n->start.push_back(off);
    off += k->size;
    n->runs += k->runs;
    n->lo = std::min(n->lo, k->disp + k->lo);
    n->hi = std::max(n->hi, k->disp + k->hi);
    allLeaves = allLeaves && k->kind == Node::kLeaf;
  }
  n->start.push_back(off);
  n->size = off;
  if (allLeaves && kids.size() <= kFlatLeavesMax) {
    n->flatLeaves = true;
    for (size_t i = 0; i < kids.size(); ++i) n->fields.push_back({kids[i]->disp, kids[i]->size, n->start[i]});
  }
  n->kids = std::move(kids);
  return n;
}

namespace {
bool emit(std::vector<Block>& out, int64_t disp, uint64_t len, size_t limit) {
  if (!out.empty() && out.back().disp + static_cast<int64_t>(out.back().len) == disp) {
    out.back().len += len;
    return true;
  }
  if (out.size() >= limit) return false;
  out.push_back({disp, len});
  return true;
}
}  // namespace

bool flatten(const Node& n, int64_t org, std::vector<Block>& out, size_t limit) {
  const int64_t o = org + n.disp;
  switch (n.kind) {
    case Node::kLeaf:
      return emit(out, o, n.size, limit);
    case Node::kVec:
      for (uint64_t i = 0; i < n.count; ++i)
        if (!flatten(*n.child, o + static_cast<int64_t>(i) * n.stride, out, limit)) return false;
      return true;
    case Node::kList:
      for (const NodeP& k : n.kids)
        if (!flatten(*k, o, out, limit)) return false;
      return true;
  }
  return true;
}

}  // namespace shmcoll::dt
