// MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent, the collective
// part (api/dist_graph.h).  In order, on the parent communicator's team:
//  1. an allgather of each rank's verdict on its own arguments and of what
//     it says about weights, so that an argument error on one rank fails the
//     call everywhere (instead of leaving the others waiting in step 2) and
//     MPI_UNWEIGHTED given by some ranks but not all is refused everywhere;
//  2. (general form) an alltoall of record counts, then an alltoallv of the
//     records: each edge s -> d named by any rank goes to s (out-list) and d
//     (in-list); a rank's lists are in the order of the naming rank, then of
//     the edges as that rank gave them;
//  3. an alltoall of per-pair edge counts and an allgather of the first
//     disagreement each rank sees, so that every rank refuses an
//     inconsistent graph with the same message (a neighbourhood collective
//     on it could wait forever);
//  4. the new communicator: a dup of the parent, in the same order.
// Memory per rank is O(size + edges it names or ends), never O(size^2).
#include "api/dist_graph.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <vector>

#include "api/check.h"
#include "coll/coll.h"
#include "runtime/topo.h"

namespace shmcoll::api::impl {

namespace {

// An argument error found before the collective part, raised only after
// every rank has heard of it.
struct Deferred {
  int cls = MPI_SUCCESS;
  char why[256] = {};
  [[gnu::format(printf, 3, 4)]] int set(int errClass, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    cls = errClass;
    return cls;
  }
};

// What a rank says about weights: nothing (it names no edge and did not pass
// MPI_UNWEIGHTED: MPI_WEIGHTS_EMPTY or any array is then allowed), or that
// the graph is unweighted or weighted.
enum : int32_t { kNoSay = 0, kUnweighted = 1, kWeighted = 2 };

// Step 1's contribution.
struct Say {
  int32_t error, weights;
};

// One end of an edge, as routed in step 2.
struct Record {
  int32_t out;    // 1: the receiver is the source (an out-edge), 0: the destination
  int32_t other;  // the other end
  int32_t weight;
};

// The first disagreement a rank sees (step 3); src < 0: none.
struct Mismatch {
  int32_t src, dst, outCount, inCount;
  bool before(const Mismatch& m) const {
    return m.src < 0 || (src >= 0 && (src < m.src || (src == m.src && dst < m.dst)));
  }
};

// Fixed-size blocks, one for every pair (an alltoall of raw bytes).
class FixedAlltoall final : public coll::ExchangeArgs {
 public:
  FixedAlltoall(const void* send, void* recv, uint64_t bytes)
      : send_(static_cast<const char*>(send)), recv_(static_cast<char*>(recv)), bytes_(bytes) {
    op = coll::Op::kAlltoall;
  }
  coll::Block send(uint32_t p) const override { return {send_ + p * bytes_, bytes_, dt::byteType()}; }
  coll::Block recv(uint32_t p) const override { return {recv_ + p * bytes_, bytes_, dt::byteType()}; }

 private:
  const char* send_;
  char* recv_;
  uint64_t bytes_;
};

// Records to and from every peer: counts[p] at offsets[p] (an alltoallv).
class RecordAlltoallv final : public coll::ExchangeArgs {
 public:
  RecordAlltoallv(const std::vector<Record>& send, const std::vector<uint32_t>& sendAt, std::vector<Record>& recv,
                  const std::vector<uint32_t>& recvAt)
      : send_(send), sendAt_(sendAt), recv_(recv), recvAt_(recvAt) {
    op = coll::Op::kAlltoallv;
    skipEmpty = true;  // (sparse: every rank knows what it receives from the counts round)
  }
  coll::Block send(uint32_t p) const override {
    return {reinterpret_cast<const char*>(send_.data() + sendAt_[p]), (sendAt_[p + 1] - sendAt_[p]) * sizeof(Record),
            dt::byteType()};
  }
  coll::Block recv(uint32_t p) const override {
    return {reinterpret_cast<const char*>(recv_.data() + recvAt_[p]), (recvAt_[p + 1] - recvAt_[p]) * sizeof(Record),
            dt::byteType()};
  }

 private:
  const std::vector<Record>& send_;
  const std::vector<uint32_t>& sendAt_;
  std::vector<Record>& recv_;
  const std::vector<uint32_t>& recvAt_;
};

// The weight array `w` of `count` edges: what it says, and whether it is
// usable (MPI_ERR_ARG in *d otherwise).
int32_t weightSay(const char* arg, const int* w, int64_t count, Deferred* d) {
  if (w == MPI_UNWEIGHTED) return kUnweighted;
  if (count == 0) return kNoSay;
  if (w == MPI_WEIGHTS_EMPTY)
    d->set(MPI_ERR_ARG, "%s is MPI_WEIGHTS_EMPTY but %lld edge%s given (it is for an empty list only)", arg,
           static_cast<long long>(count), count == 1 ? " is" : "s are");
  else if (!w)
    d->set(MPI_ERR_ARG, "%s is NULL", arg);
  else
    for (int64_t i = 0; i < count; ++i)
      if (w[i] < 0) {
        d->set(MPI_ERR_ARG, "%s[%lld] = %d is negative", arg, static_cast<long long>(i), w[i]);
        break;
      }
  return kWeighted;
}

// A rank named in the arguments: one of comm_old's (MPI_ERR_RANK in *d
// otherwise).
bool rankOk(const char* arg, int64_t i, int r, uint32_t size, Deferred* d) {
  if (r >= 0 && static_cast<uint32_t>(r) < size) return true;
  d->set(MPI_ERR_RANK, "%s[%lld] = %d is not a rank of comm_old (0 .. %u)", arg, static_cast<long long>(i), r,
         size - 1);
  return false;
}

// A list of `count` elements, not NULL when count > 0 and count >= 0.
bool listOk(const char* countArg, int count, const char* arg, const void* p, Deferred* d) {
  if (count < 0) {
    d->set(MPI_ERR_ARG, "%s = %d is negative", countArg, count);
    return false;
  }
  if (count > 0 && !p) {
    d->set(MPI_ERR_ARG, "%s is NULL (%s = %d)", arg, countArg, count);
    return false;
  }
  return true;
}

// The general form's edges, checked: (source, destination, weight) in the order
// given.
struct Edge {
  int32_t s, d, w;
};
int32_t generalEdges(const DistGraphArgs& a, uint32_t size, std::vector<Edge>* edges, Deferred* d) {
  if (!listOk("n", a.n, "sources", a.sources, d) || !listOk("n", a.n, "degrees", a.degrees, d)) return kNoSay;
  int64_t total = 0;
  for (int i = 0; i < a.n; ++i) {
    if (a.degrees[i] < 0) {
      d->set(MPI_ERR_ARG, "degrees[%d] = %d is negative", i, a.degrees[i]);
      return kNoSay;
    }
    if (!rankOk("sources", i, a.sources[i], size, d)) return kNoSay;
    total += a.degrees[i];
  }
  if (total > INT32_MAX) {
    d->set(MPI_ERR_ARG, "the degrees add up to %lld edges, more than an int counts", static_cast<long long>(total));
    return kNoSay;
  }
  if (!listOk("the sum of degrees", static_cast<int>(total), "destinations", a.destinations, d)) return kNoSay;
  const int32_t say = weightSay("weights", a.weights, total, d);
  if (d->cls) return say;
  const bool weighted = say == kWeighted;
  edges->reserve(total);
  for (int i = 0, k = 0; i < a.n; ++i)
    for (int j = 0; j < a.degrees[i]; ++j, ++k) {
      if (!rankOk("destinations", k, a.destinations[k], size, d)) return say;
      edges->push_back({a.sources[i], a.destinations[k], weighted ? a.weights[k] : 1});
    }
  return say;
}

// The adjacent form's lists, checked, straight into the topology.
int32_t adjacentLists(const DistGraphArgs& a, uint32_t size, rt::Topology* t, Deferred* d) {
  if (!listOk("indegree", a.indegree, "sources", a.sources, d) ||
      !listOk("outdegree", a.outdegree, "destinations", a.destinations, d))
    return kNoSay;
  for (int i = 0; i < a.indegree; ++i)
    if (!rankOk("sources", i, a.sources[i], size, d)) return kNoSay;
  for (int i = 0; i < a.outdegree; ++i)
    if (!rankOk("destinations", i, a.destinations[i], size, d)) return kNoSay;
  const int32_t in = weightSay("sourceweights", a.sourceweights, a.indegree, d);
  const int32_t out = weightSay("destweights", a.destweights, a.outdegree, d);
  if (d->cls) return kNoSay;
  if ((in == kUnweighted && out == kWeighted) || (in == kWeighted && out == kUnweighted)) {
    d->set(MPI_ERR_ARG, "%s is MPI_UNWEIGHTED but %s holds weights (a graph is weighted or not)",
           in == kUnweighted ? "sourceweights" : "destweights", in == kUnweighted ? "destweights" : "sourceweights");
    return kNoSay;
  }
  t->in.assign(a.sources, a.sources + a.indegree);
  t->out.assign(a.destinations, a.destinations + a.outdegree);
  if (in == kWeighted) t->inWeights.assign(a.sourceweights, a.sourceweights + a.indegree);
  if (out == kWeighted) t->outWeights.assign(a.destweights, a.destweights + a.outdegree);
  return std::max(in, out);
}

// Step 2: routes every edge to both its ends.
int route(rt::Comm* c, const std::vector<Edge>& edges, rt::Topology* t) {
  const uint32_t n = c->team.size();
  std::vector<uint32_t> count(n, 0), sendAt(n + 1, 0), recvAt(n + 1, 0), got(n, 0);
  for (const Edge& e : edges) ++count[e.s], ++count[e.d];
  for (uint32_t p = 0; p < n; ++p) sendAt[p + 1] = sendAt[p] + count[p];
  std::vector<Record> out(sendAt[n]);
  std::vector<uint32_t> fill(sendAt.begin(), sendAt.end() - 1);
  for (const Edge& e : edges) {
    out[fill[e.s]++] = {1, e.d, e.w};
    out[fill[e.d]++] = {0, e.s, e.w};
  }
  SHMCOLL_CHECK(coll::exchange(coll::Place{&c->team}, FixedAlltoall(count.data(), got.data(), sizeof(uint32_t))));
  for (uint32_t p = 0; p < n; ++p) recvAt[p + 1] = recvAt[p] + got[p];
  std::vector<Record> in(recvAt[n]);
  SHMCOLL_CHECK(coll::exchange(coll::Place{&c->team}, RecordAlltoallv(out, sendAt, in, recvAt)));
  // (in is in the order of the naming rank, then of its list)
  for (const Record& r : in) {
    (r.out ? t->out : t->in).push_back(r.other);
    (r.out ? t->outWeights : t->inWeights).push_back(r.weight);
  }
  return 0;
}

// Step 3: the first pair (in order) whose edge counts the two ends disagree
// on, the same on every rank (src < 0: none); and the most edges any rank
// has to one rank (rt::Topology::rounds).
int firstMismatch(rt::Comm* c, const rt::Topology& t, Mismatch* first, uint32_t* rounds, uint32_t* pairRounds) {
  const uint32_t n = c->team.size(), me = c->team.rank;
  // Per peer p: {edges me -> p in my out-list, edges p -> me in my in-list}.
  std::vector<int32_t> mine(2 * n, 0), theirs(2 * n, 0);
  for (int p : t.out) ++mine[2 * p];
  for (int p : t.in) ++mine[2 * p + 1];
  SHMCOLL_CHECK(coll::exchange(coll::Place{&c->team}, FixedAlltoall(mine.data(), theirs.data(), 2 * sizeof(int32_t))));
  Mismatch m{-1, -1, 0, 0};
  const int32_t self = static_cast<int32_t>(me);
  for (uint32_t p = 0; p < n; ++p) {
    const int32_t peer = static_cast<int32_t>(p);
    // p -> me: p's out-list against my in-list; me -> p: mine against p's
    // in-list.
    const Mismatch a{peer, self, theirs[2 * p], mine[2 * p + 1]}, b{self, peer, mine[2 * p], theirs[2 * p + 1]};
    if (a.outCount != a.inCount && a.before(m)) m = a;
    if (b.outCount != b.inCount && b.before(m)) m = b;
  }
  struct Verdict {
    Mismatch m;
    uint32_t repeats, pairRepeats;
  };
  const Verdict v{m, rt::mostRepeats(t.out.data(), t.out.size()),
                  rt::mostRepeats(t.out.data(), t.out.size(), static_cast<int>(me))};
  std::vector<Verdict> all(n);
  SHMCOLL_CHECK(rt::gatherAll(*c, &v, sizeof v, all.data()));
  *first = Mismatch{-1, -1, 0, 0};
  *rounds = *pairRounds = 1;
  for (const Verdict& x : all) {
    if (x.m.src >= 0 && x.m.before(*first)) *first = x.m;
    *rounds = std::max(*rounds, x.repeats);
    *pairRounds = std::max(*pairRounds, x.pairRepeats);
  }
  return 0;
}

}  // namespace

int createDistGraph(Call& call, rt::Comm* c, const DistGraphArgs& a, MPI_Comm* newcomm) {
  const uint32_t n = c->team.size();
  auto t = std::make_shared<rt::Topology>();
  t->kind = MPI_DIST_GRAPH;
  Deferred bad;
  std::vector<Edge> edges;
  const int32_t say = a.adjacentForm ? adjacentLists(a, n, t.get(), &bad) : generalEdges(a, n, &edges, &bad);

  // Step 1: every rank learns of every argument error and weight choice.
  const Say mine{bad.cls, bad.cls ? kNoSay : say};
  std::vector<Say> all(n);
  if (int rc = rt::gatherAll(*c, &mine, sizeof mine, all.data())) return check::engine(call, rc);
  if (bad.cls) return check::fail(call, bad.cls, "%s", bad.why);
  int unweighted = -1, weighted = -1;
  for (uint32_t r = 0; r < n; ++r) {
    if (all[r].error)
      return check::fail(
          call, all[r].error,
          "rank %u of comm_old passed an invalid argument (its own call says which); no communicator is made", r);
    if (all[r].weights == kUnweighted && unweighted < 0) unweighted = static_cast<int>(r);
    if (all[r].weights == kWeighted && weighted < 0) weighted = static_cast<int>(r);
  }
  if (unweighted >= 0 && weighted >= 0)
    return check::fail(
        call, MPI_ERR_ARG,
        "rank %d passed MPI_UNWEIGHTED but rank %d passed weights (every rank must pass MPI_UNWEIGHTED, or none)",
        unweighted, weighted);
  // Weighted unless someone said MPI_UNWEIGHTED (a graph nobody named an edge
  // of included).
  t->weighted = unweighted < 0;

  // Step 2 (general form): the edges to their ends.
  if (!a.adjacentForm)
    if (int rc = route(c, edges, t.get())) return check::engine(call, rc);
  if (!t->weighted) t->inWeights.clear(), t->outWeights.clear();

  // Step 3: both ends agree on every pair's edge count.
  Mismatch m{-1, -1, 0, 0};
  if (int rc = firstMismatch(c, *t, &m, &t->rounds, &t->pairRounds)) return check::engine(call, rc);
  if (m.src >= 0)
    return check::fail(call, MPI_ERR_TOPOLOGY,
                       "the graph is inconsistent: rank %d lists rank %d as a destination %d time%s but rank %d lists "
                       "rank %d as a source %d time%s (the first such pair)",
                       m.src, m.dst, m.outCount, m.outCount == 1 ? "" : "s", m.dst, m.src, m.inCount,
                       m.inCount == 1 ? "" : "s");

  // Step 4: the communicator, in comm_old's order.
  rt::Comm* nc = nullptr;
  if (int rc = rt::dupComm(*c, &nc)) return check::engine(call, rc);
  nc->topo = std::move(t);
  *newcomm = nc->handle;
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl
