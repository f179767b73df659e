// The pure parts of the process-topology functions (runtime/topo.cc):
// MPI_Dims_create's factorisation against an exhaustive search, Cartesian
// coordinates, shifts and neighbour lists, and the symmetry check of
// MPI_Graph_create graphs.
#include "runtime/topo.h"

#include <gtest/gtest.h>

#include <climits>
#include <functional>
#include <vector>

using namespace shmcoll::rt;

namespace {

std::vector<int> factors(int m, int k) {
  std::vector<int> v;
  EXPECT_TRUE(balancedFactors(m, k, &v)) << m << " into " << k;
  return v;
}

// The smallest spread (largest - smallest) of any factorisation of m into k
// factors, by trying every non-increasing one.
int bestSpread(int m, int k) {
  int best = INT_MAX;
  std::function<void(int, int, int, int)> walk = [&](int rest, int left, int cap, int largest) {
    if (left == 0) return;
    for (int f = std::min(rest, cap); f >= 1; --f) {
      if (rest % f) continue;
      const int top = largest ? largest : f;
      if (left == 1) {
        if (f == rest) best = std::min(best, top - f);
        continue;
      }
      walk(rest / f, left - 1, f, top);
    }
  };
  walk(m, k, m, 0);
  return best;
}

TEST(DimsCreate, KnownCases) {
  EXPECT_EQ(factors(6, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(factors(16, 3), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(factors(24, 3), (std::vector<int>{4, 3, 2}));
  EXPECT_EQ(factors(64, 3), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(factors(7, 3), (std::vector<int>{7, 1, 1}));
  EXPECT_EQ(factors(1, 3), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(factors(1024, 1), (std::vector<int>{1024}));
  EXPECT_EQ(factors(1 << 30, 30), std::vector<int>(30, 2));
  std::vector<int> none;
  EXPECT_TRUE(balancedFactors(1, 0, &none));
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(balancedFactors(6, 0, &none));
}

TEST(DimsCreate, BalancedNonIncreasingAndExact) {
  for (int k = 1; k <= 4; ++k)
    for (int m = 1; m <= 400; ++m) {
      const std::vector<int> v = factors(m, k);
      ASSERT_EQ(v.size(), static_cast<size_t>(k));
      long product = 1;
      for (size_t i = 0; i < v.size(); ++i) {
        product *= v[i];
        if (i) {
          EXPECT_GE(v[i - 1], v[i]) << m << " into " << k;
        }
      }
      EXPECT_EQ(product, m) << m << " into " << k;
      EXPECT_EQ(v.front() - v.back(), bestSpread(m, k)) << m << " into " << k;
    }
}

TEST(DimsCreate, LargePrimeAndHighlyComposite) {
  EXPECT_EQ(factors(2147483647, 2), (std::vector<int>{2147483647, 1}));
  // 2*3*5*7*11*13*17*19*23 into 3: some balanced split, exact and ordered
  const std::vector<int> v = factors(223092870, 3);
  EXPECT_EQ(static_cast<long>(v[0]) * v[1] * v[2], 223092870L);
  EXPECT_GE(v[0], v[1]);
  EXPECT_GE(v[1], v[2]);
}

TEST(Cart, CoordinatesRoundTrip) {
  const std::vector<int> dims{3, 4, 2};
  EXPECT_EQ(gridSize(dims), 24);
  EXPECT_EQ(gridSize({}), 1);
  for (int r = 0; r < 24; ++r) {
    int c[3];
    cartCoords(dims, r, c);
    EXPECT_EQ(cartRankAt(dims, c), r);
  }
  int c[3];
  cartCoords(dims, 13, c);  // row-major: 13 = 1*8 + 2*2 + 1
  EXPECT_EQ(c[0], 1);
  EXPECT_EQ(c[1], 2);
  EXPECT_EQ(c[2], 1);
}

TEST(Cart, GridSizeDoesNotOverflow) { EXPECT_GT(gridSize({65536, 65536, 65536}), INT_MAX); }

TEST(Cart, Shifts) {
  const auto t = makeCart({4, 3}, {1, 0}, 0);
  int c[2] = {0, 0};
  EXPECT_EQ(cartStep(*t, c, 0, 1), 3);
  EXPECT_EQ(cartStep(*t, c, 0, -1), 9);  // periodic: wraps to row 3
  EXPECT_EQ(cartStep(*t, c, 0, 4 * 1000 + 1), 3);
  EXPECT_EQ(cartStep(*t, c, 0, static_cast<int64_t>(INT_MIN)), 0);  // INT_MIN is a multiple of 4
  EXPECT_EQ(cartStep(*t, c, 1, 2), 2);
  EXPECT_EQ(cartStep(*t, c, 1, 3), MPI_PROC_NULL);
  EXPECT_EQ(cartStep(*t, c, 1, -1), MPI_PROC_NULL);
}

TEST(Cart, NeighbourLists) {
  // per dimension: the source, then the destination of a shift by +1
  EXPECT_EQ(makeCart({3}, {1}, 0)->in, (std::vector<int>{2, 1}));
  EXPECT_EQ(makeCart({3}, {0}, 0)->out, (std::vector<int>{MPI_PROC_NULL, 1}));
  EXPECT_EQ(makeCart({2}, {1}, 0)->in, (std::vector<int>{1, 1}));  // the same rank twice
  EXPECT_EQ(makeCart({1}, {1}, 0)->in, (std::vector<int>{0, 0}));
  const auto t = makeCart({2, 3}, {0, 1}, 4);  // coordinates (1, 1)
  EXPECT_EQ(t->in, (std::vector<int>{1, MPI_PROC_NULL, 3, 5}));
  EXPECT_EQ(t->in, t->out);
  EXPECT_EQ(t->kind, MPI_CART);
  EXPECT_TRUE(makeCart({}, {}, 0)->in.empty());
}

TEST(Graph, NeighboursAndSymmetry) {
  // a ring of 4 with both directions: symmetric
  const std::vector<int> index{2, 4, 6, 8}, edges{1, 3, 0, 2, 1, 3, 2, 0};
  const auto t = makeGraph(index, edges, 2);
  EXPECT_EQ(t->kind, MPI_GRAPH);
  EXPECT_EQ(t->out, (std::vector<int>{1, 3}));
  EXPECT_EQ(t->in, t->out);
  EXPECT_TRUE(t->refusal.empty());
  // node 0 lists 1, which lists nobody
  EXPECT_EQ(graphAsymmetry({1, 1}, {1}),
            "the MPI_Graph_create graph is not symmetric: node 0 lists node 1 1 time but node 1 lists node 0 0 times");
  // multiplicities count: 0 lists 1 twice, 1 lists 0 once
  EXPECT_NE(graphAsymmetry({2, 3}, {1, 1, 0}).find("node 0 lists node 1 2 times but node 1 lists node 0 1 time"),
            std::string::npos);
  // self-loops are symmetric by themselves
  EXPECT_TRUE(graphAsymmetry({2, 2}, {0, 0}).empty());
  // the first asymmetric pair in order is named, on every node alike
  EXPECT_EQ(makeGraph({0, 1, 1}, {0}, 0)->refusal, makeGraph({0, 1, 1}, {0}, 2)->refusal);
  EXPECT_NE(makeGraph({0, 1, 1}, {0}, 0)->refusal.find("node 0 lists node 1 0 times but node 1 lists node 0 1 time"),
            std::string::npos);
}

// How many rounds a blocking neighbourhood collective runs: the most edges
// of one pair anywhere in the topology, and the same without self edges.
TEST(Rounds, CountRepeatedEdgesAcrossTheWholeTopology) {
  struct Case {
    std::vector<int> dims, periods;
    uint32_t rounds, pairRounds;
  };
  const Case cases[] = {
      {{4, 3}, {1, 1}, 1, 1},        // every neighbour once
      {{3, 1}, {1, 1}, 2, 1},        // itself twice, along the dimension of extent 1
      {{2, 2}, {1, 1}, 2, 2},        // the other rank twice, in each dimension
      {{1, 1, 1}, {1, 1, 1}, 6, 1},  // itself six times
      {{2, 1}, {0, 0}, 1, 1},        // not periodic: MPI_PROC_NULL, not a repeat
      {{}, {}, 1, 1},
  };
  for (const Case& c : cases)
    for (int r = 0; r < static_cast<int>(gridSize(c.dims)); ++r) {
      const auto t = makeCart(c.dims, c.periods, r);
      EXPECT_EQ(t->rounds, c.rounds) << "grid of " << c.dims.size() << " dimensions, rank " << r;
      EXPECT_EQ(t->pairRounds, c.pairRounds) << "grid of " << c.dims.size() << " dimensions, rank " << r;
    }
  // A graph: every node sees the most repeats of any node's list (node 2
  // lists itself three times, node 0 lists node 1 twice).
  const std::vector<int> index{2, 4, 7}, edges{1, 1, 0, 0, 2, 2, 2};
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(makeGraph(index, edges, r)->rounds, 3u);
    EXPECT_EQ(makeGraph(index, edges, r)->pairRounds, 2u);
  }
  const int list[] = {3, MPI_PROC_NULL, 3, MPI_PROC_NULL, 5, 3};
  EXPECT_EQ(mostRepeats(list, 6), 3u);
  EXPECT_EQ(mostRepeats(list, 6, 3), 1u);
  EXPECT_EQ(mostRepeats(list, 0), 1u);
}

}  // namespace
