// Groups: size, rank, inclusion and exclusion (by rank lists and by ranges),
// rank translation, comparison, MPI_Group_free.  Local objects
// (runtime/comm.cc keeps them): none of these needs MPI_Init.  The generated
// entry points have checked the group handles and the output arguments.
#include <algorithm>
#include <vector>

#include "api/check.h"
#include "api/group.h"
#include "runtime/comm.h"
#include "runtime/context.h"

namespace shmcoll::api {

int compareMembers(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a == b) return MPI_IDENT;
  auto x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}

namespace impl {

namespace {

// Checks ranks[0..n) against a group of `size`: in range, no repeats.
int checkRanks(const Call& call, int n, const int* ranks, size_t size) {
  SHMCOLL_CHECK(check::length(call, "n", n));
  if (n > 0 && !ranks) return check::fail(call, MPI_ERR_ARG, "ranks is NULL with n = %d", n);
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || static_cast<size_t>(ranks[i]) >= size)
      return check::fail(call, MPI_ERR_RANK, "ranks[%d] = %d is outside the group of size %zu", i, ranks[i], size);
    if (seen[ranks[i]]) return check::fail(call, MPI_ERR_RANK, "ranks[%d] = %d appears twice", i, ranks[i]);
    seen[ranks[i]] = true;
  }
  return MPI_SUCCESS;
}

// The ranks of n triplets (first, last, stride), in order: first, first +
// stride, ... while not past last.  The standard's rules: a stride is not 0,
// a triplet runs towards its last rank (first > last needs a negative
// stride), every rank it reaches is in the group, and no rank comes twice
// over all the triplets (MPI_ERR_ARG for the first two, MPI_ERR_RANK for
// the others).
int rangeRanks(const Call& call, int n, const int ranges[][3], size_t size, std::vector<int>* out) {
  SHMCOLL_CHECK(check::length(call, "n", n));
  if (n > 0 && !ranges) return check::fail(call, MPI_ERR_ARG, "ranges is NULL with n = %d", n);
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    const int64_t first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0)
      return check::fail(call, MPI_ERR_ARG, "ranges[%d] = (%d, %d, 0): the stride is 0", i, ranges[i][0], ranges[i][1]);
    if ((last > first && stride < 0) || (last < first && stride > 0))
      return check::fail(call, MPI_ERR_ARG,
                         "ranges[%d] = (%d, %d, %d): a stride of that sign never reaches the last rank", i,
                         ranges[i][0], ranges[i][1], ranges[i][2]);
    const int64_t steps = (last - first) / stride;
    for (int64_t k = 0; k <= steps; ++k) {
      const int64_t r = first + k * stride;
      if (r < 0 || static_cast<uint64_t>(r) >= size)
        return check::fail(call, MPI_ERR_RANK,
                           "ranges[%d] = (%d, %d, %d) reaches rank %lld, outside the group of size %zu", i,
                           ranges[i][0], ranges[i][1], ranges[i][2], static_cast<long long>(r), size);
      if (seen[r])
        return check::fail(call, MPI_ERR_RANK,
                           "ranges[%d] = (%d, %d, %d) reaches rank %lld, which an earlier range or "
                           "step reached already",
                           i, ranges[i][0], ranges[i][1], ranges[i][2], static_cast<long long>(r));
      seen[r] = true;
      out->push_back(static_cast<int>(r));
    }
  }
  return MPI_SUCCESS;
}

MPI_Group handleOf(std::vector<uint32_t> members) {
  return members.empty() ? MPI_GROUP_EMPTY : rt::newGroup(std::move(members));
}

}  // namespace

int groupSize(Call&, rt::Group* g, int* size) {
  *size = static_cast<int>(g->members.size());
  return MPI_SUCCESS;
}

int groupRank(Call&, rt::Group* g, int* rank) {
  auto it = std::find(g->members.begin(), g->members.end(), rt::ctx().eng.rank);
  *rank = it == g->members.end() ? MPI_UNDEFINED : static_cast<int>(it - g->members.begin());
  return MPI_SUCCESS;
}

int groupIncl(Call& call, rt::Group* g, int n, const int ranks[], MPI_Group* newgroup) {
  SHMCOLL_CHECK(checkRanks(call, n, ranks, g->members.size()));
  std::vector<uint32_t> m;
  for (int i = 0; i < n; ++i) m.push_back(g->members[ranks[i]]);
  *newgroup = handleOf(std::move(m));
  return MPI_SUCCESS;
}

int groupExcl(Call& call, rt::Group* g, int n, const int ranks[], MPI_Group* newgroup) {
  SHMCOLL_CHECK(checkRanks(call, n, ranks, g->members.size()));
  std::vector<bool> drop(g->members.size(), false);
  for (int i = 0; i < n; ++i) drop[ranks[i]] = true;
  std::vector<uint32_t> m;
  for (size_t i = 0; i < g->members.size(); ++i)
    if (!drop[i]) m.push_back(g->members[i]);
  *newgroup = handleOf(std::move(m));
  return MPI_SUCCESS;
}

int groupRangeIncl(Call& call, rt::Group* g, int n, int ranges[][3], MPI_Group* newgroup) {
  std::vector<int> ranks;
  SHMCOLL_CHECK(rangeRanks(call, n, ranges, g->members.size(), &ranks));
  std::vector<uint32_t> m;
  for (int r : ranks) m.push_back(g->members[r]);
  *newgroup = handleOf(std::move(m));
  return MPI_SUCCESS;
}

int groupRangeExcl(Call& call, rt::Group* g, int n, int ranges[][3], MPI_Group* newgroup) {
  std::vector<int> ranks;
  SHMCOLL_CHECK(rangeRanks(call, n, ranges, g->members.size(), &ranks));
  std::vector<bool> drop(g->members.size(), false);
  for (int r : ranks) drop[r] = true;
  std::vector<uint32_t> m;
  for (size_t i = 0; i < g->members.size(); ++i)
    if (!drop[i]) m.push_back(g->members[i]);
  *newgroup = handleOf(std::move(m));
  return MPI_SUCCESS;
}

int groupTranslateRanks(Call& call, rt::Group* a, int n, const int ranks1[], rt::Group* b, int ranks2[]) {
  SHMCOLL_CHECK(check::length(call, "n", n));
  if (n > 0) {
    SHMCOLL_CHECK(check::notNull(call, "ranks1", ranks1));
    SHMCOLL_CHECK(check::notNull(call, "ranks2", ranks2));
  }
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || static_cast<size_t>(ranks1[i]) >= a->members.size())
      return check::fail(call, MPI_ERR_RANK, "ranks1[%d] = %d is outside group1", i, ranks1[i]);
    auto it = std::find(b->members.begin(), b->members.end(), a->members[ranks1[i]]);
    ranks2[i] = it == b->members.end() ? MPI_UNDEFINED : static_cast<int>(it - b->members.begin());
  }
  return MPI_SUCCESS;
}

int groupCompare(Call&, rt::Group* a, rt::Group* b, int* result) {
  *result = compareMembers(a->members, b->members);
  return MPI_SUCCESS;
}

int groupFree(Call& call, MPI_Group* group) {
  if (*group != MPI_GROUP_EMPTY) {
    rt::Group* g = nullptr;
    SHMCOLL_CHECK(check::group(call, "group", *group, &g));
    rt::releaseGroup(*group);
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // namespace impl

}  // namespace shmcoll::api

#include "generated/entry_group.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/group.txt)
