// The walks over a round's peers (transport/round.h: forSends, forReceives)
// with a sparse round's shortcuts (Pairs::noSends, noReceives, onlyPeer), as
// the rooted collectives set them: for every group size up to 9, root and
// rank, a walk with the shortcuts must reach exactly the peers the full walk
// reaches (sends: those with sendsTo; receives: those with receivesFrom), and
// a walk whose callback returns non-zero must stop with that value.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "transport/round.h"

namespace shmcoll::transport {
namespace {

enum class Kind { kBcast, kGather, kScatter };

// A rooted collective's pairs on rank `me` of `n`, root `root`.
class Rooted final : public Pairs {
 public:
  Rooted(Kind k, uint32_t root, uint32_t me) : k_(k), root_(root), me_(me) { allPairs = false; }
  Block send(uint32_t) const override { return {nullptr, 1, dt::byteType()}; }
  Block recv(uint32_t) const override { return {nullptr, 1, dt::byteType()}; }
  bool sends(uint32_t p) const override {
    return k_ == Kind::kGather ? me_ != root_ && p == root_ : me_ == root_;
  }
  bool receives(uint32_t p) const override {
    return k_ == Kind::kGather ? me_ == root_ : me_ != root_ && p == root_;
  }
  // The shortcuts, as api/coll_rooted.cc sets them.
  void shortcuts() {
    const bool rootSends = k_ != Kind::kGather;
    if (me_ == root_) {
      (rootSends ? noReceives : noSends) = true;
    } else {
      (rootSends ? noSends : noReceives) = true;
      onlyPeer = root_;
    }
  }

 private:
  Kind k_;
  uint32_t root_, me_;
};

std::set<uint32_t> sendsOf(const Pairs& a, uint32_t n, uint32_t me) {
  std::set<uint32_t> s;
  EXPECT_EQ(forSends(a, n, me, [&](uint32_t p) { return s.insert(p).second ? 0 : 99; }), 0);
  return s;
}
std::set<uint32_t> receivesOf(const Pairs& a, uint32_t n, uint32_t me) {
  std::set<uint32_t> s;
  EXPECT_EQ(forReceives(a, n, me, [&](uint32_t p) { return a.receivesFrom(p) ? (s.insert(p).second ? 0 : 99) : 0; }),
            0);
  return s;
}

TEST(WalksTest, ShortcutsReachThePeersTheFullWalkReaches) {
  for (Kind k : {Kind::kBcast, Kind::kGather, Kind::kScatter})
    for (uint32_t n = 1; n <= 9; ++n)
      for (uint32_t root = 0; root < n; ++root)
        for (uint32_t me = 0; me < n; ++me) {
          Rooted full(k, root, me), cut(k, root, me);
          cut.shortcuts();
          SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(k) << " n " << n << " root " << root
                                          << " me " << me);
          const std::set<uint32_t> s = sendsOf(full, n, me), r = receivesOf(full, n, me);
          EXPECT_EQ(sendsOf(cut, n, me), s);
          EXPECT_EQ(receivesOf(cut, n, me), r);
          // (the full walks themselves: the root sends to or receives from every other rank, a
          // non-root pairs with the root alone, nobody with itself)
          const bool rootSends = k != Kind::kGather;
          std::set<uint32_t> others;
          for (uint32_t p = 0; p < n; ++p)
            if (p != me) others.insert(p);
          const std::set<uint32_t> rootOnly = me == root ? std::set<uint32_t>{} : std::set<uint32_t>{root};
          EXPECT_EQ(s, me == root ? (rootSends ? others : std::set<uint32_t>{}) : (rootSends ? std::set<uint32_t>{}
                                                                                            : rootOnly));
          EXPECT_EQ(r, me == root ? (rootSends ? std::set<uint32_t>{} : others) : (rootSends ? rootOnly
                                                                                            : std::set<uint32_t>{}));
        }
}

TEST(WalksTest, AWalkStopsWithTheCallbacksValue) {
  for (uint32_t n = 2; n <= 5; ++n) {
    Rooted reader(Kind::kBcast, 0, n - 1), root(Kind::kBcast, 0, 0);
    reader.shortcuts();
    root.shortcuts();
    int calls = 0;
    EXPECT_EQ(forReceives(reader, n, n - 1, [&](uint32_t p) { return ++calls, p == 0 ? 7 : 0; }), 7);
    EXPECT_EQ(calls, 1);
    calls = 0;
    EXPECT_EQ(forSends(root, n, 0, [&](uint32_t) { return ++calls, 5; }), 5);
    EXPECT_EQ(calls, 1);  // (the first send stops the walk)
    EXPECT_EQ(forSends(reader, n, n - 1, [&](uint32_t) { return 3; }), 0);  // a reader sends nothing
    EXPECT_EQ(forReceives(root, n, 0, [&](uint32_t) { return 3; }), 0);     // a root of a bcast receives nothing
  }
}

}  // namespace
}  // namespace shmcoll::transport
