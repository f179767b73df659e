// Type constructors: bounds, signature and loop description of each new type.
//
// Every constructor reduces to "parts": n copies of a child type T placed at
// disp + k*step (k < n).  From the parts:
//   size      = sum n * size(T)
//   lb, ub    (MPI-4.0 5.1.7) if any part's T carries explicit lb/ub markers
//             (it came from MPI_Type_create_resized, directly or inside),
//             the markers alone decide: lb = min over marked parts of
//             (copy disp + lb(T)), ub = max of (copy disp + ub(T)), and the
//             new type carries markers too.  Otherwise lb/ub are the min/max
//             over all non-empty parts.  A part whose T has an empty type map
//             contributes nothing, markers or not (as Open MPI and MPICH).
//   epsilon   MPI_Type_create_struct only, and only without markers: the
//             extent is rounded up to the largest alignment of the basic
//             types inside (double 8, int 4, long double 16, ...).  This is
//             what Open MPI 4 and MPICH 4 do (checked on this machine: struct
//             {char@0, double@8, int@16} has extent 24 in both), so a struct
//             that mirrors a C struct has extent sizeof(struct).  Differences
//             we do not copy: MPICH treats a struct of one repeated basic type
//             as hindexed and does not pad it; Open MPI also pads hvector and
//             hindexed with byte strides (hvector(2,1,5,int): 12 in Open MPI,
//             9 in MPICH and here); MPICH ignores the stickiness of markers.
//   true lb/ub the bytes the loop description touches.
// Subarray and darray are built directly (not through a chain of temporary
// types) with the lb 0 / ub = whole array markers the standard gives them.
//
// Overflow: the large-count (_c) constructors take 64-bit counts, strides and
// displacements, so every product and sum here is checked.  A type whose size
// (data bytes) exceeds the largest MPI_Count fails with err::kCount; one
// whose bounds (lb, ub, true lb/ub, or any offset the loop description holds)
// leave the 64-bit address range fails with err::kArg.  Nothing wraps.
#include <algorithm>
#include <climits>
#include <mutex>


#include "common/status.h"
#include "dt/datatype.h"
#include "dt/node.h"

namespace shmcoll::dt {

const char* tierName(Tier t) {
  switch (t) {
    case Tier::kEmpty: return "empty";
    case Tier::kContig: return "contig";
    case Tier::kBlocks: return "blocks";
    case Tier::kRegular: return "regular";
    case Tier::kIrregular: return "irregular";
  }
  return "?";
}

namespace {

bool mulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool addOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// size = a * b * c bytes, at most the largest MPI_Count; false on overflow.
bool sizeOk(uint64_t a, uint64_t b, uint64_t c, uint64_t* size) {
  uint64_t ab;
  return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, size) &&
         *size <= static_cast<uint64_t>(INT64_MAX);
}

int sizeError() {
  return fail(err::kCount, "the new type would hold more bytes than an MPI_Count can express (the counts, block "
                             "lengths and sizes of the old types multiply past 2^63 - 1)");
}
int boundsError() {
  return fail(err::kArg, "the new type's bounds leave the 64-bit address range (the strides, displacements or "
                           "counts are too large)");
}

struct Bounds {
  bool any = false, marked = false;
  bool overflow = false;     // some bound left the int64_t range
  int64_t lb = 0, ub = 0;    // over unmarked contributions
  int64_t mlb = 0, mub = 0;  // over marked ones
  uint32_t align = 1;

  // n copies of t at disp + k*step.
  void add(int64_t disp, uint64_t n, int64_t step, const Type* t) {
    // Empty children count for nothing, even with markers (resized of a
    // zero-size type): Open MPI and MPICH agree on that.
    if (n == 0 || t->size == 0) return;
    int64_t span, lo, hi, tlo, thi;
    // (the true bounds are checked too: the loop description holds them)
    if (n - 1 > static_cast<uint64_t>(INT64_MAX) || !mulOk(static_cast<int64_t>(n - 1), step, &span) ||
        !addOk(disp, std::min<int64_t>(0, span), &lo) || !addOk(disp, std::max<int64_t>(0, span), &hi) ||
        !addOk(lo, t->trueLb, &tlo) || !addOk(hi, t->trueUb, &thi) || !addOk(lo, t->lb, &lo) ||
        !addOk(hi, t->ub, &hi)) {
      overflow = true;
      return;
    }
    if (t->markers) {
      mlb = marked ? std::min(mlb, lo) : lo;
      mub = marked ? std::max(mub, hi) : hi;
      marked = true;
    } else {
      lb = any ? std::min(lb, lo) : lo;
      ub = any ? std::max(ub, hi) : hi;
      any = true;
    }
    if (t->size > 0) align = std::max(align, t->align);
  }

  void apply(Type* t, bool pad) const {
    t->align = align;
    if (marked) {
      t->markers = true;
      t->lb = mlb;
      t->ub = mub;
    } else if (any) {
      t->lb = lb;
      t->ub = ub;
      const int64_t ext = ub - lb;
      if (pad && align > 1 && ext % align) t->ub += align - ext % align;
    }
  }
};

Type* newType() { return new Type(); }

// True bounds, contiguity and element count from the loop description.
void finish(Type* t) {
  if (t->root) {
    t->trueLb = t->root->disp + t->root->lo;
    t->trueUb = t->root->disp + t->root->hi;
  } else {
    t->trueLb = t->trueUb = 0;
  }
  t->contiguous = t->size == 0 || (t->root && t->root->kind == Node::kLeaf &&
                                   static_cast<int64_t>(t->size) == t->extent());
  t->elements = 0;
  for (const Type::SigPart& p : t->sig) t->elements += p.count * p.type->elements;
}

void addKid(Type* t, const Type* k) {
  retain(k);
  t->kids.push_back(const_cast<Type*>(k));
}

void addSig(Type* t, uint64_t count, const Type* k) {
  if (count == 0 || k->size == 0) return;
  if (!t->sig.empty() && t->sig.back().type == k)
    t->sig.back().count += count;
  else
    t->sig.push_back({count, k});
}

}  // namespace

std::recursive_mutex& refMutex() {
  static std::recursive_mutex m;
  return m;
}

void retain(const Type* t) {
  if (!t || t->builtin) return;
  std::lock_guard<std::recursive_mutex> g(refMutex());
  ++const_cast<Type*>(t)->refs;
}

void release(const Type* ct) {
  if (!ct || ct->builtin) return;
  Type* t = const_cast<Type*>(ct);
  std::vector<Type*> kids;
  {
    std::lock_guard<std::recursive_mutex> g(refMutex());
    if (--t->refs > 0) return;
    kids.swap(t->kids);
  }
  delete t;
  for (Type* k : kids) release(k);
}

int makeContiguous(uint64_t count, const Type* old, Type** out) {
  return makeHvector(count, 1, old->extent(), old, out);
}

int makeHvector(uint64_t count, uint64_t blocklen, int64_t stride, const Type* old, Type** out) {
  uint64_t copies, size;
  if (!sizeOk(count, blocklen, 1, &copies) || !sizeOk(copies, old->size, 1, &size)) return sizeError();
  const int64_t ext = old->extent();
  Bounds b;
  // count blocks at i*stride, each blocklen copies at k*ext: the extreme
  // copies are the extreme corners, so two parts give the same bounds.
  if (count && blocklen) {
    int64_t last;
    if (!mulOk(static_cast<int64_t>(count - 1), stride, &last)) return boundsError();
    b.add(0, blocklen, ext, old);
    b.add(last, blocklen, ext, old);
  }
  if (b.overflow) return boundsError();
  Type* t = newType();
  b.apply(t, false);
  t->size = size;
  t->root = vec(0, count, stride, vec(0, blocklen, ext, old->root));
  addSig(t, copies, old);
  addKid(t, old);
  finish(t);
  *out = t;
  return kOk;
}

int makeHindexed(uint64_t count, const uint64_t* blocklens, const int64_t* disps, const Type* old, Type** out) {
  const int64_t ext = old->extent();
  Bounds b;
  uint64_t total = 0, size;
  for (uint64_t i = 0; i < count; ++i) {
    if (__builtin_add_overflow(total, blocklens[i], &total)) return sizeError();
    b.add(disps[i], blocklens[i], ext, old);
  }
  if (!sizeOk(total, old->size, 1, &size)) return sizeError();
  if (b.overflow) return boundsError();
  std::vector<std::pair<int64_t, NodeP>> parts;
  parts.reserve(count);
  for (uint64_t i = 0; i < count; ++i) parts.emplace_back(disps[i], vec(0, blocklens[i], ext, old->root));
  Type* t = newType();
  b.apply(t, false);
  t->size = size;
  t->root = list(std::move(parts));
  addSig(t, total, old);
  addKid(t, old);
  finish(t);
  *out = t;
  return kOk;
}

int makeHindexedBlock(uint64_t count, uint64_t blocklen, const int64_t* disps, const Type* old, Type** out) {
  std::vector<uint64_t> bl(count, blocklen);
  return makeHindexed(count, bl.data(), disps, old, out);
}

int makeStruct(uint64_t count, const uint64_t* blocklens, const int64_t* disps, const Type* const* types,
               Type** out) {
  Bounds b;
  uint64_t size = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t part;
    if (!sizeOk(blocklens[i], types[i]->size, 1, &part) || __builtin_add_overflow(size, part, &size) ||
        size > static_cast<uint64_t>(INT64_MAX))
      return sizeError();
    b.add(disps[i], blocklens[i], types[i]->extent(), types[i]);
  }
  if (b.overflow) return boundsError();
  Type* t = newType();
  std::vector<std::pair<int64_t, NodeP>> parts;
  parts.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const Type* c = types[i];
    parts.emplace_back(disps[i], vec(0, blocklens[i], c->extent(), c->root));
    addSig(t, blocklens[i], c);
    addKid(t, c);
  }
  t->size = size;
  b.apply(t, true);
  t->root = list(std::move(parts));
  finish(t);
  *out = t;
  return kOk;
}

int makeResized(const Type* old, int64_t lb, int64_t extent, Type** out) {
  int64_t ub;
  if (!addOk(lb, extent, &ub))
    return fail(err::kArg, "lb = %lld plus extent = %lld leaves the 64-bit address range", (long long)lb,
                (long long)extent);
  Type* t = newType();
  t->size = old->size;
  t->lb = lb;
  t->ub = ub;
  t->markers = true;
  t->align = old->align;
  t->root = old->root;
  addSig(t, 1, old);
  addKid(t, old);
  finish(t);
  *out = t;
  return kOk;
}

int makeDup(const Type* old, Type** out) {
  Type* t = newType();
  t->size = old->size;
  t->lb = old->lb;
  t->ub = old->ub;
  t->markers = old->markers;
  t->align = old->align;
  t->root = old->root;
  addSig(t, 1, old);
  addKid(t, old);
  finish(t);
  t->committed = false;
  if (old->committed) commit(t);
  *out = t;
  return kOk;
}

int makeSubarray(int ndims, const int64_t* sizes, const int64_t* subsizes, const int64_t* starts, int order,
                 const Type* old, Type** out) {
  // Work in Fortran order: dimension 0 varies fastest.
  std::vector<int64_t> sz(ndims), sub(ndims), st(ndims);
  for (int i = 0; i < ndims; ++i) {
    const int j = order == 0 ? ndims - 1 - i : i;
    sz[i] = sizes[j];
    sub[i] = subsizes[j];
    st[i] = starts[j];
  }
  const int64_t ext = old->extent();
  uint64_t total = 1, size;
  for (int d = 0; d < ndims; ++d)
    if (!sizeOk(total, static_cast<uint64_t>(sub[d]), 1, &total)) return sizeError();
  if (!sizeOk(total, old->size, 1, &size)) return sizeError();
  // The strides and offsets (they bound everything the loop description
  // holds: the subarray lies inside the array, starts + subsizes <= sizes).
  int64_t stride = ext, disp = 0;
  std::vector<int64_t> strides(ndims);
  for (int d = 0; d < ndims; ++d) {
    int64_t off;
    strides[d] = stride;
    if (!mulOk(st[d], stride, &off) || !addOk(disp, off, &disp) || !mulOk(stride, sz[d], &stride))
      return fail(err::kArg, "the array of %d dimensions is too large to address", ndims);
  }
  NodeP n = old->root;
  for (int d = 0; d < ndims; ++d) n = vec(0, static_cast<uint64_t>(sub[d]), strides[d], n);
  Type* t = newType();
  t->root = shifted(n, disp);
  t->size = size;
  t->markers = true;
  t->lb = 0;
  t->ub = stride;  // product of sizes times the old extent
  t->align = old->align;
  addSig(t, total, old);
  addKid(t, old);
  finish(t);
  *out = t;
  return kOk;
}

int makeDarray(int size, int rank, int ndims, const int64_t* gsizes, const int* distribs, const int* dargs,
               const int* psizes, int order, const Type* old, Type** out) {
  // Process coordinates: the grid is numbered row-major whatever `order` is.
  std::vector<int> coord(ndims);
  {
    int r = rank;
    for (int d = ndims - 1; d >= 0; --d) {
      coord[d] = r % psizes[d];
      r /= psizes[d];
    }
  }
  // Per dimension, the global indices this process owns as groups of runs:
  // `count` runs of `len` indices starting at lo, lo + step, ...  A cyclic
  // distribution is one group (and a shorter last run), however many runs it
  // has, so a large array costs no more than a small one.
  struct Runs {
    int64_t lo, len, count, step;
  };
  std::vector<std::vector<Runs>> runs(ndims);
  for (int d = 0; d < ndims; ++d) {
    const int64_t g = gsizes[d], p = psizes[d], c = coord[d];
    auto& r = runs[d];
    if (distribs[d] == 2) {  // none
      r.push_back({0, g, 1, 0});
    } else if (distribs[d] == 0) {  // block
      const int64_t b = dargs[d] < 0 ? g / p + (g % p != 0) : dargs[d];
      if (b * p < g)
        return fail(err::kArg, "array_of_dargs[%d] = %lld: %lld blocks of it do not cover array_of_gsizes[%d] = %lld",
                    d, (long long)b, (long long)p, d, (long long)g);
      const int64_t lo = std::min(g, c * b), hi = std::min(g, (c + 1) * b);
      if (hi > lo) r.push_back({lo, hi - lo, 1, 0});
    } else {  // cyclic: runs of b at c*b + k*b*p
      const int64_t b = dargs[d] < 0 ? 1 : dargs[d], lo = c * b, step = b * p;
      if (lo < g) {
        const int64_t k = (g - lo - 1) / step + 1, last = lo + (k - 1) * step, tail = std::min(b, g - last);
        if (tail == b) {
          r.push_back({lo, b, k, step});
        } else {
          if (k > 1) r.push_back({lo, b, k - 1, step});
          r.push_back({last, tail, 1, 0});
        }
      }
    }
  }
  // Build from the fastest dimension outwards.
  const int64_t ext = old->extent();
  int64_t stride = ext;
  uint64_t local = 1, bytes;
  NodeP n = old->root;
  for (int i = 0; i < ndims; ++i) {
    const int d = order == 0 ? ndims - 1 - i : i;
    std::vector<std::pair<int64_t, NodeP>> parts;
    uint64_t cnt = 0;
    for (const Runs& g : runs[d]) {
      int64_t off, step;
      if (!mulOk(g.lo, stride, &off) || !mulOk(g.step, stride, &step))
        return fail(err::kArg, "the distributed array is too large to address");
      parts.emplace_back(off, vec(0, static_cast<uint64_t>(g.count), step,
                                  vec(0, static_cast<uint64_t>(g.len), stride, n)));
      cnt += static_cast<uint64_t>(g.count * g.len);  // (at most gsizes[d])
    }
    n = list(std::move(parts));
    if (!sizeOk(local, cnt, 1, &local)) return sizeError();
    if (!mulOk(stride, gsizes[d], &stride)) return fail(err::kArg, "the distributed array is too large to address");
  }
  if (!sizeOk(local, old->size, 1, &bytes)) return sizeError();
  Type* t = newType();
  t->root = n;
  t->size = bytes;
  t->markers = true;
  t->lb = 0;
  t->ub = stride;
  t->align = old->align;
  addSig(t, local, old);
  addKid(t, old);
  finish(t);
  *out = t;
  return kOk;
}

void setContents(Type* t, int combiner, std::vector<int> ints, std::vector<int64_t> addrs,
                 std::vector<int64_t> counts) {
  t->combiner = combiner;
  t->ints = std::move(ints);
  t->addrs = std::move(addrs);
  t->counts = std::move(counts);
}

void commit(Type* t) {
  if (t->committed) return;
  t->blocks.clear();
  if (t->root) {
    t->blocksComplete = flatten(*t->root, 0, t->blocks, kMaxFlatBlocks);
    if (!t->blocksComplete) t->blocks.clear();
  } else {
    t->blocksComplete = true;
  }
  t->numBlocks = t->blocksComplete ? t->blocks.size() : t->root->runs;
  if (t->size == 0) {
    t->tier = Tier::kEmpty;
  } else if (t->contiguous) {
    t->tier = Tier::kContig;
  } else if (t->size / t->numBlocks >= 256) {
    t->tier = Tier::kBlocks;
  } else {
    // Regular when the innermost level is a fixed-length leaf under vectors.
    const Node* n = t->root.get();
    while (n->kind == Node::kVec) n = n->child.get();
    t->tier = n->kind == Node::kLeaf ? Tier::kRegular : Tier::kIrregular;
  }
  t->committed = true;
}

namespace {
// Basic elements in the first `bytes` (< t->size) bytes of one element.
uint64_t partial(const Type* t, uint64_t bytes, bool* exact) {
  if (bytes == 0) {
    *exact = true;
    return 0;
  }
  if (t->builtin) {
    // Scalars are one element; pair types are their two blocks.
    uint64_t e = 0;
    for (const Block& b : t->blocks) {
      if (bytes < b.len) break;
      bytes -= b.len;
      ++e;
    }
    *exact = bytes == 0;
    return e;
  }
  uint64_t e = 0;
  for (const Type::SigPart& p : t->sig) {
    const uint64_t whole = p.count * p.type->size;
    if (bytes >= whole) {
      e += p.count * p.type->elements;
      bytes -= whole;
      continue;
    }
    const uint64_t k = bytes / p.type->size;
    return e + k * p.type->elements + partial(p.type, bytes - k * p.type->size, exact);
  }
  *exact = bytes == 0;
  return e;
}
}  // namespace

uint64_t elementsIn(const Type* t, uint64_t bytes, bool* exact) {
  if (t->size == 0) {
    *exact = bytes == 0;
    return 0;
  }
  const uint64_t whole = bytes / t->size;
  return whole * t->elements + partial(t, bytes - whole * t->size, exact);
}

}  // namespace shmcoll::dt
