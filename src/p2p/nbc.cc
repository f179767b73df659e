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

}  // namespace shmcoll::nbc
