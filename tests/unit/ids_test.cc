// FreeWindow (runtime/ids.h): the compact offer of free context ids must pick
// exactly the id the whole free sets would, or say that it cannot.  IdTurn:
// one creation at a time holds a rank's turn to offer ids, the lowest key
// registered first.
#include "runtime/ids.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace shmcoll::rt {
namespace {

using Set = std::vector<uint64_t>;  // kCtxWords words, a bit per free id

uint32_t lowestCommon(const std::vector<Set>& sets) {
  for (uint32_t k = 0; k < kCtxWords; ++k) {
    uint64_t all = ~0ull;
    for (const Set& s : sets) all &= s[k];
    if (all) return k * 64 + static_cast<uint32_t>(__builtin_ctzll(all));
  }
  return UINT32_MAX;
}

// Decides from the windows; the result, when there is one, must be the true answer.
bool decideAndCheck(const std::vector<Set>& sets, uint32_t* id) {
  std::vector<FreeWindow> wins;
  for (const Set& s : sets) wins.emplace_back(s.data());
  const bool decided = FreeWindow::decide(
      wins.size(), [&](size_t i) -> const FreeWindow& { return wins[i]; }, id);
  if (decided) {
    EXPECT_EQ(*id, lowestCommon(sets));
  }
  return decided;
}

Set allUsedBelow(uint32_t id) {
  Set s(kCtxWords, ~0ull);
  for (uint32_t i = 0; i < id; ++i) s[i / 64] &= ~(1ull << (i % 64));
  return s;
}

TEST(FreeWindow, SameSetsDecideAtOnce) {
  for (uint32_t used : {0u, 1u, 63u, 64u, 500u, 16383u, kAsyncCtxFirst - 1}) {
    std::vector<Set> sets(5, allUsedBelow(used));
    uint32_t id = 0;
    EXPECT_TRUE(decideAndCheck(sets, &id)) << used;
    EXPECT_EQ(id, used);
  }
}

TEST(FreeWindow, NoFreeIdOnOneMemberIsDecided) {
  std::vector<Set> sets(3, allUsedBelow(10));
  sets[1].assign(kCtxWords, 0);
  uint32_t id = 0;
  EXPECT_TRUE(decideAndCheck(sets, &id));
  EXPECT_EQ(id, UINT32_MAX);
}

TEST(FreeWindow, FarApartSetsAreLeftToTheWholeSets) {
  // Member 0 has everything free; member 1 only ids from word 100 on, with
  // member 0's window ending at word 8: the windows cannot tell.
  std::vector<Set> sets{allUsedBelow(0), allUsedBelow(100 * 64)};
  uint32_t id = 0;
  EXPECT_FALSE(decideAndCheck(sets, &id));
  EXPECT_EQ(lowestCommon(sets), 100u * 64);
}

TEST(FreeWindow, DisjointWindowsAreNotDecidedWrongly) {
  // Overlapping windows with no common free id in the overlap.
  Set a(kCtxWords, 0), b(kCtxWords, 0);
  for (uint32_t k = 0; k < kCtxWords; ++k) {
    a[k] = 0x5555555555555555ull;
    b[k] = 0xaaaaaaaaaaaaaaaaull;
  }
  a[200] = b[200] = 1ull << 7;  // the only common id
  uint32_t id = 0;
  EXPECT_FALSE(decideAndCheck({a, b}, &id));
  EXPECT_EQ(lowestCommon({a, b}), 200u * 64 + 7);
}

TEST(FreeWindow, RandomSetsNeverDecideWrongly) {
  std::mt19937_64 rng(12345);
  int decided = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = 1 + rng() % 6;
    const uint32_t base = static_cast<uint32_t>(rng() % 2000);
    std::vector<Set> sets;
    for (size_t i = 0; i < n; ++i) {
      Set s = allUsedBelow(base + static_cast<uint32_t>(rng() % 700));
      // some ids above taken too, and a few below freed again
      for (int j = 0; j < 40; ++j) {
        const uint32_t x = static_cast<uint32_t>(rng() % (kAsyncCtxFirst));
        if (rng() & 1)
          s[x / 64] &= ~(1ull << (x % 64));
        else if (x < base)
          s[x / 64] |= 1ull << (x % 64);
      }
      sets.push_back(std::move(s));
    }
    uint32_t id = 0;
    decided += decideAndCheck(sets, &id);
  }
  EXPECT_GT(decided, 0);
}

// The turn goes to the lowest key registered, only when nobody holds it, and
// back when its holder gives it or ends; keys registered later and lower
// take precedence over those waiting.
TEST(IdTurn, LowestRegisteredKeyTakesTheTurnWhenItIsFree) {
  IdTurns turns;
  {
    IdTurn dup(turns, creationKey(7, 0));
    EXPECT_TRUE(dup.take());  // alone: it holds the turn
    EXPECT_TRUE(dup.take());  // (asked again within the attempt)
    IdTurn group(turns, creationKey(3, 1 + 5));
    EXPECT_FALSE(group.take()) << "the turn is held by another creation";
    dup.give();
    EXPECT_FALSE(dup.take()) << "a lower key is registered: the turn waits for it";
    EXPECT_TRUE(group.take());
    {
      IdTurn lower(turns, creationKey(2, 0));
      EXPECT_FALSE(lower.take()) << "held: even the lowest key waits for the holder's attempt to end";
      group.give();
      EXPECT_FALSE(dup.take());
      EXPECT_TRUE(lower.take());
    }  // (ends holding it: gives it back)
    EXPECT_FALSE(dup.take());
    EXPECT_TRUE(group.take());
  }
  EXPECT_TRUE(turns.running.empty());
  EXPECT_FALSE(turns.held);
  IdTurn next(turns, creationKey(9, 0));
  EXPECT_TRUE(next.take());
}

// Two creations of one key (an intercommunicator's on both sides of the
// same ranks is the nearest case): one holds the turn at a time.
TEST(IdTurn, EqualKeysTakeTurns) {
  IdTurns turns;
  IdTurn a(turns, creationKey(4, 0)), b(turns, creationKey(4, 0));
  EXPECT_TRUE(a.take());
  EXPECT_FALSE(b.take());
  a.give();
  EXPECT_TRUE(b.take());
  EXPECT_FALSE(a.take());
}

}  // namespace
}  // namespace shmcoll::rt
