// Process topologies: the parts of the topology functions that need no
// communication (api/topo.cc does the argument checks and the collective
// parts): MPI_Dims_create's factorisation, Cartesian coordinates and shifts,
// and the Topology a new Cartesian or graph communicator carries.
#include "runtime/topo.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace shmcoll::rt {

namespace {

// Depth-first search over the non-increasing factorisations of a number
// into a fixed count of factors, keeping the best one (balancedFactors).
class FactorSearch {
 public:
  FactorSearch(int m, int k) : k_(k) {
    for (int64_t d = 1; d * d <= m; ++d)
      if (m % d == 0) {
        divisors_.push_back(static_cast<int>(d));
        if (d * d != m) divisors_.push_back(static_cast<int>(m / d));
      }
    std::sort(divisors_.begin(), divisors_.end());
    cur_.reserve(k);
    walk(m, m);
  }
  const std::vector<int>& best() const { return best_; }

 private:
  // Chooses the next factor for what is left, `rest`, none larger than `cap`.
  void walk(int rest, int cap) {
    const int left = k_ - static_cast<int>(cur_.size());
    if (left == 0) {
      if (rest == 1) consider();
      return;
    }
    if (rest == 1) {  // (the remaining factors are all 1)
      cur_.resize(k_, 1);
      consider();
      cur_.resize(k_ - left);
      return;
    }
    // The largest remaining factor is at least the left-th root of rest.
    for (auto it = std::upper_bound(divisors_.begin(), divisors_.end(), std::min(rest, cap));
         it != divisors_.begin();) {
      const int f = *--it;
      if (rest % f) continue;
      if (!atLeastRoot(f, rest, left)) break;
      // (Smaller factors only widen the spread: past the best one found, stop.)
      if (!best_.empty() && !cur_.empty() && cur_.front() - f > spread_) break;
      cur_.push_back(f);
      walk(rest / f, f);
      cur_.pop_back();
    }
  }
  // f^left >= rest.
  static bool atLeastRoot(int f, int rest, int left) {
    int64_t p = 1;
    for (int i = 0; i < left && p < rest; ++i) p *= f;
    return p >= rest;
  }
  void consider() {
    const int spread = cur_.front() - cur_.back();
    // Among equal spreads, the larger smallest factor, then the larger next
    // smallest, ... (what MPICH chooses too).
    const bool evener =
        spread == spread_ && std::lexicographical_compare(best_.rbegin(), best_.rend(), cur_.rbegin(), cur_.rend());
    if (best_.empty() || spread < spread_ || evener) {
      best_ = cur_;
      spread_ = spread;
    }
  }

  int k_;
  std::vector<int> divisors_, cur_, best_;
  int spread_ = 0;
};

}  // namespace

bool balancedFactors(int m, int k, std::vector<int>* out) {
  out->clear();
  if (k == 0) return m == 1;
  *out = FactorSearch(m, k).best();
  return true;
}

int64_t gridSize(const std::vector<int>& dims) {
  int64_t n = 1;
  for (int d : dims) {
    n *= d;
    if (n > INT32_MAX) return INT64_MAX;  // (larger than any communicator; avoids overflow)
  }
  return n;
}

void cartCoords(const std::vector<int>& dims, int rank, int* coords) {
  for (size_t d = dims.size(); d-- > 0;) {
    coords[d] = rank % dims[d];
    rank /= dims[d];
  }
}

int cartRankAt(const std::vector<int>& dims, const int* coords) {
  int rank = 0;
  for (size_t d = 0; d < dims.size(); ++d) rank = rank * dims[d] + coords[d];
  return rank;
}

int cartStep(const Topology& t, const int* coords, int direction, int64_t disp) {
  const int64_t size = t.dims[direction];
  int64_t at = coords[direction] + disp;
  if (t.periods[direction]) {
    at %= size;
    if (at < 0) at += size;
  } else if (at < 0 || at >= size) {
    return MPI_PROC_NULL;
  }
  std::vector<int> moved(coords, coords + t.dims.size());
  moved[direction] = static_cast<int>(at);
  return cartRankAt(t.dims, moved.data());
}

std::shared_ptr<Topology> makeCart(std::vector<int> dims, std::vector<int> periods, int rank) {
  auto t = std::make_shared<Topology>();
  t->kind = MPI_CART;
  t->dims = std::move(dims);
  t->periods = std::move(periods);
  for (int& p : t->periods) p = p ? 1 : 0;
  std::vector<int> coords(t->dims.size());
  cartCoords(t->dims, rank, coords.data());
  // Per dimension, the source then the destination of a shift by +1 (the
  // order the neighbourhood collectives use).
  for (size_t d = 0; d < t->dims.size(); ++d) {
    t->out.push_back(cartStep(*t, coords.data(), static_cast<int>(d), -1));
    t->out.push_back(cartStep(*t, coords.data(), static_cast<int>(d), 1));
  }
  t->in = t->out;
  // Every rank's lists repeat a rank only along a periodic dimension of
  // extent 2 (the other rank, twice) or 1 (the rank itself, twice per such
  // dimension): the most repeats on any rank, from the grid alone.
  uint32_t selfTwice = 0, pairTwice = 0;
  for (size_t d = 0; d < t->dims.size(); ++d) {
    if (t->periods[d] && t->dims[d] == 1) selfTwice += 2;
    if (t->periods[d] && t->dims[d] == 2) pairTwice = 2;
  }
  t->rounds = std::max({1u, selfTwice, pairTwice});
  t->pairRounds = std::max(1u, pairTwice);
  return t;
}

uint32_t mostRepeats(const int* list, size_t n, int skip) {
  std::vector<int> v;
  for (size_t i = 0; i < n; ++i)
    if (list[i] != MPI_PROC_NULL && list[i] != skip) v.push_back(list[i]);
  std::sort(v.begin(), v.end());
  uint32_t most = 1;
  for (size_t i = 0, run = 0; i < v.size(); ++i) {
    run = i > 0 && v[i] == v[i - 1] ? run + 1 : 1;
    most = std::max(most, static_cast<uint32_t>(run));
  }
  return most;
}

std::string graphAsymmetry(const std::vector<int>& index, const std::vector<int>& edges) {
  // Every edge (i, j) and every reversed edge (j, i), sorted: the graph is
  // symmetric with multiplicities exactly when the two lists are equal.
  std::vector<std::pair<int, int>> fwd, rev;
  fwd.reserve(edges.size());
  rev.reserve(edges.size());
  for (size_t i = 0, e = 0; i < index.size(); ++i)
    for (; e < static_cast<size_t>(index[i]); ++e) {
      fwd.emplace_back(static_cast<int>(i), edges[e]);
      rev.emplace_back(edges[e], static_cast<int>(i));
    }
  std::sort(fwd.begin(), fwd.end());
  std::sort(rev.begin(), rev.end());
  if (fwd == rev) return {};
  // The first pair where they differ names the smallest asymmetric pair.
  const auto [f, r] = std::mismatch(fwd.begin(), fwd.end(), rev.begin());
  const std::pair<int, int> p = (r == rev.end() || (f != fwd.end() && *f < *r)) ? *f : *r;
  const auto count = [](const std::vector<std::pair<int, int>>& v, std::pair<int, int> x) {
    const auto range = std::equal_range(v.begin(), v.end(), x);
    return static_cast<long>(range.second - range.first);
  };
  const long there = count(fwd, p), back = count(fwd, {p.second, p.first});
  char why[200];
  std::snprintf(why, sizeof why,
                "the MPI_Graph_create graph is not symmetric: node %d lists node %d %ld time%s but node %d lists node "
                "%d %ld time%s",
                p.first, p.second, there, there == 1 ? "" : "s", p.second, p.first, back, back == 1 ? "" : "s");
  return why;
}

std::shared_ptr<Topology> makeGraph(std::vector<int> index, std::vector<int> edges, int rank) {
  auto t = std::make_shared<Topology>();
  t->kind = MPI_GRAPH;
  t->refusal = graphAsymmetry(index, edges);
  const int first = rank == 0 ? 0 : index[rank - 1];
  t->out.assign(edges.begin() + first, edges.begin() + index[rank]);
  t->in = t->out;
  // (every rank has the whole graph: the most repeats of any node's list)
  for (size_t i = 0, first = 0; i < index.size(); first = static_cast<size_t>(index[i]), ++i) {
    const size_t len = static_cast<size_t>(index[i]) - first;
    t->rounds = std::max(t->rounds, mostRepeats(edges.data() + first, len));
    t->pairRounds = std::max(t->pairRounds, mostRepeats(edges.data() + first, len, static_cast<int>(i)));
  }
  t->index = std::move(index);
  t->edges = std::move(edges);
  return t;
}

}  // namespace shmcoll::rt
