// Schedules for the nonblocking collectives (see nbc.h).
#include "p2p/nbc.h"

#include <algorithm>
#include <vector>

#include "p2p/schedule.h"

namespace shmcoll::nbc {

p2p::Request* exchange(coll::Team& team, const coll::ExchangeArgs& a, bool inPlace) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  // Self copy first (before anything else can write the receive blocks).
  if (!inPlace) {
    if (int rc = coll::selfCopy(a.broadcast ? a.send(0) : a.send(me), a.recv(me))) s->setError(rc);
  }
  std::vector<coll::Block> sends(n);
  if (inPlace) {
    // What each receive block holds now is what goes to that peer.
    std::vector<uint64_t> off(n + 1, 0);
    for (uint32_t p = 0; p < n; ++p) off[p + 1] = off[p] + (p == me ? 0 : a.recv(p).bytes());
    char* data = s->temp(off[n]);
    for (uint32_t p = 0; p < n; ++p) {
      if (p == me) continue;
      coll::Block b = a.recv(p);
      if (b.bytes()) dt::Cursor(b.buf, b.count, b.type).pack(0, data + off[p], b.bytes());
      sends[p] = {data + off[p], off[p + 1] - off[p], byteType()};
    }
  } else {
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) sends[p] = a.broadcast ? a.send(0) : a.send(p);
  }
  Schedule::Round& r = s->round();
  // Receives first, so most messages find their receive already posted.
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + n - k) % n;
    if (!a.allPairs && !a.receives(p)) continue;
    coll::Block b = a.recv(p);
    s->hold(b.type);
    r.xfers.push_back({false, p, b});
  }
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + k) % n;
    if (!a.allPairs && !a.sends(p)) continue;
    s->hold(sends[p].type);
    r.xfers.push_back({true, p, sends[p]});
  }
  return start(s);
}

p2p::Request* barrier(coll::Team& team) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  for (uint32_t k = 1; k < n; k <<= 1) {
    Schedule::Round& r = s->round();
    r.xfers.push_back({false, (me + n - k) % n, {nullptr, 0, byteType()}});
    r.xfers.push_back({true, (me + k) % n, {nullptr, 0, byteType()}});
  }
  return start(s);
}

p2p::Request* reduce(coll::Team& team, const coll::Reduction& red, int root) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  const uint32_t target = root < 0 ? 0 : static_cast<uint32_t>(root);
  s->hold(red);
  const char* mine = static_cast<const char*>(red.in ? red.in : red.out);
  const coll::Block out{static_cast<const char*>(red.out), red.count, red.type};
  if (n == 1) {
    if (red.in) coll::selfCopy({mine, red.count, red.type}, out);
    return start(s);
  }
  if (me != target) {
    s->round().xfers.push_back({true, target, {mine, red.count, red.type}});
    if (root < 0) s->round().xfers.push_back({false, target, out});
    return start(s);
  }
  // The target receives every input into a private copy laid out like the
  // user's buffer, then folds them in rank order: acc = in[n-1], then
  // acc = in[j] (op) acc for j = n-2 .. 0, which gives a non-commutative
  // operation a0 o a1 o ... o a(n-1).
  std::vector<const char*> in(n);
  Schedule::Round& gather = s->round();
  for (uint32_t p = 0; p < n; ++p) {
    if (p == me) {
      in[p] = mine;
      continue;
    }
    char* t = tempLike(s, red.count, red.type);
    in[p] = t;
    gather.xfers.push_back({false, p, {t, red.count, red.type}});
  }
  char* acc = tempLike(s, red.count, red.type);
  const coll::Reduction r = red;
  gather.after = [in, acc, r, out]() {
    fold(in, acc, r, r.count);
    coll::selfCopy({acc, r.count, r.type}, out);
  };
  if (root < 0) {
    Schedule::Round& bc = s->round();
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) bc.xfers.push_back({true, p, out});
  }
  return start(s);
}

// Algorithm: nonblocking reduce_scatter(_block), direct.  One round: every
// rank sends slice p of its input (counts[p] elements, in rank order) to rank
// p and receives slice `me` of every other input into a private copy; then
// it folds the n slices in rank order (a0 o a1 o ... o a(n-1)) into a private
// accumulator and copies that to recvbuf.  Cost per rank for m bytes of
// input: (n-1)/n * m bytes out (on average) and (n-1) * counts[me] elements
// in, in one round; n * counts[me] elements of temporary memory.  This is the
// first phase of the blocking reduce-scatter (coll/reduce.cc) on the
// point-to-point layer.  In place, the input is the whole of recvbuf: its
// slices are sent from there, and the result overwrites the start of recvbuf
// only after every send of the round has completed and every slice is folded.
p2p::Request* reduceScatter(coll::Team& team, const coll::Reduction& red, const uint64_t* counts) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  s->hold(red);
  const int64_t ext = red.type->extent();
  const char* input = static_cast<const char*>(red.in ? red.in : red.out);
  std::vector<uint64_t> first(n + 1, 0);  // element offset of each slice
  for (uint32_t p = 0; p < n; ++p) first[p + 1] = first[p] + counts[p];
  auto slice = [&](uint32_t p) { return input + ext * static_cast<int64_t>(first[p]); };
  const uint64_t mine = counts[me];
  const coll::Block out{static_cast<const char*>(red.out), mine, red.type};
  if (n == 1 || red.type->size == 0) {
    if (red.in) coll::selfCopy({slice(me), mine, red.type}, out);
    return start(s);
  }
  Schedule::Round& round = s->round();
  std::vector<const char*> in(n);
  in[me] = slice(me);
  for (uint32_t k = 1; k < n && mine > 0; ++k) {  // receives first, as in exchange()
    const uint32_t p = (me + n - k) % n;
    char* t = tempLike(s, mine, red.type);
    in[p] = t;
    round.xfers.push_back({false, p, {t, mine, red.type}});
  }
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t p = (me + k) % n;
    if (counts[p] > 0) round.xfers.push_back({true, p, {slice(p), counts[p], red.type}});
  }
  if (mine == 0) return start(s);
  char* acc = tempLike(s, mine, red.type);
  const coll::Reduction r = red;
  round.after = [in, acc, r, out, mine]() {
    fold(in, acc, r, mine);
    coll::selfCopy({acc, mine, r.type}, out);
  };
  return start(s);
}

// Algorithm: nonblocking scan and exscan, recursive doubling.  In round k
// (mask = 2^k) rank me swaps its partial P with partner me ^ mask (when that
// rank exists); P is then the reduction of the aligned run of 2 * mask ranks
// holding me, kept in rank order: P = T o P when the partner is below, else
// P = P o T.  A partner below also extends the result: R = T o R (exscan: R
// = T the first time).  R lives in recvbuf itself (inclusive: it starts as
// this rank's input), so rank 0 of an exscan never writes its recvbuf.  Cost:
// ceil(log2 n) rounds of one message of m bytes each way and at most two
// folds of m bytes; 2m bytes of temporary memory.  Which rounds fold what,
// and which of the two private buffers is P, is fixed here, when the
// schedule is built.
p2p::Request* scan(coll::Team& team, const coll::Reduction& red, bool exclusive) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  s->hold(red);
  const uint64_t count = red.count;
  const coll::Block input{static_cast<const char*>(red.in ? red.in : red.out), count, red.type};
  const coll::Block out{static_cast<const char*>(red.out), count, red.type};
  if (count == 0 || red.type->size == 0) return start(s);
  std::vector<uint32_t> partners;
  for (uint32_t mask = 1; mask < n; mask <<= 1)
    if ((me ^ mask) < n) partners.push_back(me ^ mask);
  if (!exclusive && red.in) coll::selfCopy(input, out);
  if (partners.empty()) return start(s);
  char* p = tempLike(s, count, red.type);
  char* t = tempLike(s, count, red.type);
  coll::selfCopy(input, {p, count, red.type});  // (in place: before recvbuf changes)
  char* result = static_cast<char*>(red.out);
  bool haveResult = !exclusive;
  const coll::Reduction r = red;
  for (size_t i = 0; i < partners.size(); ++i) {
    const uint32_t partner = partners[i];
    const bool last = i + 1 == partners.size();  // P is not needed after the last round
    Schedule::Round& round = s->round();
    round.xfers.push_back({false, partner, {t, count, red.type}});
    round.xfers.push_back({true, partner, {p, count, red.type}});
    if (partner < me) {
      const bool first = !haveResult;
      round.after = [r, p, t, result, count, first, last]() {
        if (first) coll::selfCopy({t, count, r.type}, {result, count, r.type});
        else combine(r, t, result, count);
        if (!last) combine(r, t, p, count);
      };
      haveResult = true;
    } else {
      if (!last) round.after = [r, p, t, count]() { combine(r, p, t, count); };
      std::swap(p, t);  // the fold landed in t, which becomes P
    }
  }
  return start(s);
}

}  // namespace shmcoll::nbc
