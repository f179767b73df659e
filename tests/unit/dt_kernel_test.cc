// The datatype engine's block-move kernels (dt/kernels.h) and the walker
// paths that use them (dt/cursor.cc), byte for byte against plain byte loops.
//
//  - Every kernel of every instruction-set table this CPU can run, called
//    directly: each block-length class (and the any-length kernel at many
//    lengths), block counts 0..9 and 37 (every remainder of the unrolled
//    loops), positive, negative, overlapping and zero strides, misaligned
//    memory and stream, with and without prefetch.  Memory bytes are odd and
//    stream bytes even (or the other way round), so a byte not written, or
//    written where it must not be, never matches by luck.
//  - Through dt::Cursor with each copy kernel selected in turn: types whose
//    bulk moves take the 1-level kernel (a resized block repeated by count),
//    the 2-level kernel (short and long rows), the field-major struct kernel
//    (and its element-order fallback for overlapping fields or elements);
//    pack and unpack of windows starting and ending at every offset of the
//    first and last elements, at misaligned addresses; unpack must leave every
//    byte outside the window's part of the type map untouched.
//  - A large message streamed in 64 KiB windows, as the collectives do.
//  - MPI_Pack / MPI_Unpack at odd positions, split over several calls.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/types.h"
#include "copy/copy.h"
#include "dt/datatype.h"
#include "dt/kernels.h"

namespace {

using shmcoll::dt::Cursor;
namespace kern = shmcoll::dt::kern;
namespace copy = shmcoll::copy;

constexpr copy::Kernel kAllKernels[] = {copy::Kernel::kScalar, copy::Kernel::kSse2, copy::Kernel::kAvx2,
                                        copy::Kernel::kAvx512};

// The distinct kernel tables this machine can run.
std::vector<const kern::Table*> tables() {
  std::vector<const kern::Table*> v;
  for (copy::Kernel k : kAllKernels) {
    const kern::Table* t = kern::tableFor(k);
    if (t && std::find(v.begin(), v.end(), t) == v.end()) v.push_back(t);
  }
  return v;
}

// Fills with pseudo-random odd (or even) bytes (splitmix64, seeded from rng).
void fill(std::vector<uint8_t>& v, std::mt19937& rng, bool odd) {
  uint64_t x = rng();
  for (size_t i = 0; i < v.size(); i += 8) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (size_t k = 0; k < 8 && i + k < v.size(); ++k)
      v[i + k] = static_cast<uint8_t>((static_cast<uint8_t>(z >> (8 * k)) & 0xfe) | (odd ? 1 : 0));
  }
}

constexpr size_t kLens[kern::kNumClasses] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256, 0};
const uint64_t kAnyLens[] = {1, 3, 5, 7, 8, 9, 13, 17, 31, 33, 40, 63, 65, 100, 129, 255, 257, 300, 511, 513, 1000, 2049, 4100};

// ---- the kernels, called directly ---------------------------------------------------

struct StridedCase {
  uint64_t len, n;
  int64_t stride;
  size_t memMis, streamMis;
  int64_t pf;
};

// Runs one pack and one unpack and returns what went wrong ("" if nothing).
std::string runStrided(const kern::Table& t, kern::Class c, const StridedCase& k, std::mt19937& rng) {
  constexpr size_t kGuard = 64;
  const int64_t len = static_cast<int64_t>(k.len);
  // Memory footprint of the blocks, relative to block 0.
  int64_t lo = 0, hi = len;
  if (k.n) {
    lo = std::min<int64_t>(0, static_cast<int64_t>(k.n - 1) * k.stride);
    hi = std::max<int64_t>(len, static_cast<int64_t>(k.n - 1) * k.stride + len);
  }
  const size_t memBytes = static_cast<size_t>(hi - lo) + 2 * kGuard + 64;
  const size_t streamBytes = k.n * k.len + 2 * kGuard + 64;
  const int64_t origin = static_cast<int64_t>(kGuard + k.memMis) - lo;  // index of block 0 in mem
  auto at = [&](uint64_t i) { return origin + static_cast<int64_t>(i) * k.stride; };
  std::string why;
  char buf[256];

  // Pack: odd memory, even stream guard.
  std::vector<uint8_t> mem(memBytes), stream(streamBytes), want;
  fill(mem, rng, true);
  fill(stream, rng, false);
  want = stream;
  uint8_t* s0 = stream.data() + kGuard + k.streamMis;
  for (uint64_t i = 0; i < k.n; ++i)
    std::memcpy(want.data() + kGuard + k.streamMis + i * k.len, mem.data() + at(i), k.len);
  t.pack[c](reinterpret_cast<char*>(mem.data() + origin), k.stride, reinterpret_cast<char*>(s0),
            static_cast<int64_t>(k.len), k.n, k.len, k.pf);
  if (stream != want) {
    size_t b = 0;
    while (stream[b] == want[b]) ++b;
    snprintf(buf, sizeof buf, "pack: stream byte %zd (0 = first packed byte) is %d, expected %d",
             static_cast<ssize_t>(b) - static_cast<ssize_t>(kGuard + k.streamMis), stream[b], want[b]);
    return buf;
  }

  // Unpack: odd stream, even memory; only the blocks' bytes change, in block order.
  fill(stream, rng, true);
  fill(mem, rng, false);
  want = mem;
  for (uint64_t i = 0; i < k.n; ++i)
    std::memcpy(want.data() + at(i), stream.data() + kGuard + k.streamMis + i * k.len, k.len);
  t.unpack[c](reinterpret_cast<char*>(mem.data() + origin), k.stride, reinterpret_cast<char*>(s0),
              static_cast<int64_t>(k.len), k.n, k.len, k.pf);
  if (mem != want) {
    size_t b = 0;
    while (mem[b] == want[b]) ++b;
    snprintf(buf, sizeof buf, "unpack: memory byte %zd (0 = block 0) is %d, expected %d",
             static_cast<ssize_t>(b) - static_cast<ssize_t>(origin), mem[b], want[b]);
    return buf;
  }
  return why;
}

TEST(DtKernels, StridedEveryClassEveryTable) {
  std::mt19937 rng(7);
  const auto ts = tables();
  ASSERT_FALSE(ts.empty());
  long calls = 0;
  for (const kern::Table* t : ts) {
    for (int ci = 0; ci < kern::kNumClasses; ++ci) {
      const auto c = static_cast<kern::Class>(ci);
      std::vector<uint64_t> lens;
      if (kLens[ci])
        lens = {kLens[ci]};
      else
        lens.assign(std::begin(kAnyLens), std::end(kAnyLens));
      for (uint64_t len : lens) {
        const int64_t l = static_cast<int64_t>(len);
        // Strides: dense, one byte apart, sparse, negative, a page and more,
        // and for pack-only-safe shapes the overlapping ones (unpack then
        // keeps block order: the last block's bytes win).
        const int64_t strides[] = {l, l + 1, 2 * l + 3, -(l + 5), 4096 + 8, std::max<int64_t>(1, l / 2), 0};
        for (int64_t stride : strides) {
          for (uint64_t n : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 37}) {
            const size_t mis = static_cast<size_t>(n * 7 + static_cast<uint64_t>(stride & 63)) % 64;
            for (int64_t pf : {int64_t{0}, 3 * stride, int64_t{1} << 40}) {
              StridedCase k{len, n, stride, mis, (mis * 5 + 3) % 64, pf};
              std::string why = runStrided(*t, c, k, rng);
              ++calls;
              if (!why.empty())
                FAIL() << t->name << " class " << ci << " len " << len << " stride " << stride << " n " << n
                       << " mis " << k.memMis << "/" << k.streamMis << " pf " << pf << ": " << why;
            }
          }
        }
      }
    }
  }
  std::printf("%ld kernel calls over %zu tables\n", calls, ts.size());
}

// The 2-level kernels: outer groups of inner blocks, dense stream.
TEST(DtKernels, TwoLevelEveryClassEveryTable) {
  std::mt19937 rng(11);
  for (const kern::Table* t : tables()) {
    for (int ci = 0; ci < kern::kNumClasses; ++ci) {
      const auto c = static_cast<kern::Class>(ci);
      const uint64_t len = kLens[ci] ? kLens[ci] : 37;
      const int64_t l = static_cast<int64_t>(len);
      for (uint64_t in : {1, 2, 3, 5}) {
        for (uint64_t on : {0, 1, 2, 7}) {
          for (int64_t is : {l, 2 * l + 1, -(l + 3)}) {
            const int64_t span = std::abs(is) * static_cast<int64_t>(in) + l;
            for (int64_t os : {span + 5, -(span + 9)}) {
              // Layout: block (j, i) at origin + j*os + i*is.
              int64_t lo = 0, hi = l;
              for (uint64_t j = 0; j < on; ++j)
                for (uint64_t i = 0; i < in; ++i) {
                  const int64_t d = static_cast<int64_t>(j) * os + static_cast<int64_t>(i) * is;
                  lo = std::min(lo, d);
                  hi = std::max(hi, d + l);
                }
              const size_t mis = (on * 13 + in * 3 + len) % 64;
              const int64_t origin = 64 + static_cast<int64_t>(mis) - lo;
              std::vector<uint8_t> mem(static_cast<size_t>(hi - lo) + 192), stream(on * in * len + 160), want;
              auto blockAt = [&](uint64_t j, uint64_t i) {
                return origin + static_cast<int64_t>(j) * os + static_cast<int64_t>(i) * is;
              };
              const size_t s0 = 64 + (mis * 3) % 64;
              // Pack.
              fill(mem, rng, true);
              fill(stream, rng, false);
              want = stream;
              for (uint64_t j = 0, b = 0; j < on; ++j)
                for (uint64_t i = 0; i < in; ++i, ++b) std::memcpy(&want[s0 + b * len], &mem[blockAt(j, i)], len);
              t->pack2[c](reinterpret_cast<char*>(&mem[origin]), os, on, is, in, reinterpret_cast<char*>(&stream[s0]),
                          len);
              ASSERT_EQ(stream, want) << t->name << " pack2 class " << ci << " in " << in << " on " << on << " is "
                                      << is << " os " << os;
              // Unpack.
              fill(stream, rng, true);
              fill(mem, rng, false);
              want = mem;
              for (uint64_t j = 0, b = 0; j < on; ++j)
                for (uint64_t i = 0; i < in; ++i, ++b) std::memcpy(&want[blockAt(j, i)], &stream[s0 + b * len], len);
              t->unpack2[c](reinterpret_cast<char*>(&mem[origin]), os, on, is, in,
                            reinterpret_cast<char*>(&stream[s0]), len);
              ASSERT_EQ(mem, want) << t->name << " unpack2 class " << ci << " in " << in << " on " << on << " is "
                                   << is << " os " << os;
            }
          }
        }
      }
    }
  }
}

// ---- through the cursor --------------------------------------------------------------

// One element's type map as (disp, len) runs in type-map order, and its extent.
struct Layout {
  std::vector<std::pair<int64_t, int64_t>> runs;
  int64_t extent;
};

// Stream offset -> memory offset (relative to the buffer address) of every byte.
std::vector<int64_t> byteMap(const Layout& l, int count) {
  std::vector<int64_t> m;
  for (int e = 0; e < count; ++e)
    for (auto [d, n] : l.runs)
      for (int64_t k = 0; k < n; ++k) m.push_back(e * l.extent + d + k);
  return m;
}

// Selects each copy kernel in turn (and restores the active one).
template <class F>
void forEachKernel(F&& f) {
  const copy::Kernel saved = copy::active();
  for (copy::Kernel k : kAllKernels) {
    if (!copy::supported(k)) continue;
    ASSERT_TRUE(copy::select(k));
    f(k);
    if (testing::Test::HasFatalFailure()) break;
  }
  copy::select(saved);
}

// Packs and unpacks windows of (buf, count, type) at every offset of the first
// and last `edge` stream bytes, with several lengths each, and the whole
// message; memory is misaligned by `mis`.
void checkWindows(MPI_Datatype type, const Layout& l, int count, int64_t edge, size_t mis, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<int64_t> map = byteMap(l, count);
  const int64_t total = static_cast<int64_t>(map.size());
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < map.size(); ++i) {
    lo = i ? std::min(lo, map[i]) : map[i];
    hi = i ? std::max(hi, map[i] + 1) : map[i] + 1;
  }
  constexpr int64_t kGuard = 64;
  const int64_t origin = kGuard + static_cast<int64_t>(mis) - lo;
  std::mt19937 rng(static_cast<uint32_t>(total * 31 + count));
  std::vector<uint8_t> src(static_cast<size_t>(hi - lo + 2 * kGuard + 64));
  fill(src, rng, true);
  std::vector<uint8_t> expect(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) expect[i] = src[origin + map[i]];
  const shmcoll::dt::Type* t = shmcoll::rt::type(type);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->committed);
  ASSERT_EQ(static_cast<int64_t>(t->size) * count, total);

  std::vector<std::pair<int64_t, int64_t>> windows = {{0, total}};
  auto add = [&](int64_t pos) {
    const int64_t s = static_cast<int64_t>(t->size);
    // Short windows, and long ones ending at the end or inside the last element.
    for (int64_t n : {int64_t{1}, int64_t{2}, s - 1, s, s + 1, 2 * s + 3, total - pos, total - pos - 1,
                      total - pos - s / 2 - 1})
      if (pos >= 0 && pos < total && n >= 1 && pos + n <= total) windows.push_back({pos, n});
  };
  for (int64_t p = 0; p < std::min(edge, total); ++p) {
    add(p);
    add(total - 1 - p);
  }

  // Even bytes around and under everything pack and unpack write.
  std::vector<uint8_t> evenOut(static_cast<size_t>(total) + 128), evenMem(src.size());
  fill(evenOut, rng, false);
  fill(evenMem, rng, false);
  // What unpack reads: independent of src, so where the type map overlaps
  // itself the stream holds different bytes for the same address and the
  // order of the writes shows.
  std::vector<uint8_t> ustream(static_cast<size_t>(total));
  fill(ustream, rng, true);

  forEachKernel([&](copy::Kernel k) {
    SCOPED_TRACE(copy::name(k));
    Cursor c(src.data() + origin, static_cast<uint64_t>(count), t);
    std::vector<uint8_t> out, outWant, dst, want;
    for (auto [pos, n] : windows) {
      // Pack into an even-byte buffer at an odd offset.
      const size_t om = static_cast<size_t>(pos * 7 + n) % 61 + 1;
      out.assign(evenOut.begin(), evenOut.begin() + static_cast<ptrdiff_t>(static_cast<size_t>(n) + om + 64));
      outWant = out;
      std::memcpy(&outWant[om], &expect[pos], static_cast<size_t>(n));
      c.pack(static_cast<uint64_t>(pos), &out[om], static_cast<uint64_t>(n));
      ASSERT_EQ(out, outWant) << "pack window " << pos << "+" << n;

      // Unpack the window into even memory: exactly its bytes change (in
      // stream order, so where the map overlaps itself the later byte wins).
      dst = evenMem;
      want = evenMem;
      for (int64_t i = pos; i < pos + n; ++i) want[origin + map[i]] = ustream[i];
      Cursor u(dst.data() + origin, static_cast<uint64_t>(count), t);
      u.unpack(static_cast<uint64_t>(pos), &ustream[pos], static_cast<uint64_t>(n));
      ASSERT_EQ(dst, want) << "unpack window " << pos << "+" << n;
    }
  });
}

MPI_Datatype commit(MPI_Datatype t) {
  EXPECT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  return t;
}

// `len` contiguous bytes with extent `extent` (lb 0).
MPI_Datatype block(int64_t len, int64_t extent) {
  MPI_Datatype c, r;
  EXPECT_EQ(MPI_Type_contiguous(static_cast<int>(len), MPI_BYTE, &c), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_create_resized(c, 0, extent, &r), MPI_SUCCESS);
  MPI_Type_free(&c);
  return r;
}

const int64_t kCursorLens[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256, 3, 40, 300};

// count blocks at a stride: the 1-level kernel, with the message count as the loop.
TEST(DtKernelsCursor, OneLevelWindowsAtEveryOffset) {
  for (int64_t len : kCursorLens) {
    for (int64_t extent : {len + 8, 2 * len, 2048 + len}) {
      // 100 blocks reach the prefetching path when the stride allows it.
      for (int count : {1, 5, 100}) {
        if (count == 100 && extent > 2 * len) continue;  // keeps the buffers small
        MPI_Datatype t = commit(block(len, extent));
        Layout l{{{0, len}}, extent};
        checkWindows(t, l, count, 2 * len + 2, static_cast<size_t>(len + count) % 64,
                     "block " + std::to_string(len) + " extent " + std::to_string(extent) + " count " +
                         std::to_string(count));
        MPI_Type_free(&t);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// hvector(n, 1, stride, block) repeated: the 2-level kernel (n < 32) and one
// 1-level call per row (n >= 32), negative strides too.
TEST(DtKernelsCursor, TwoLevelWindowsAtEveryOffset) {
  for (int64_t len : kCursorLens) {
    for (int n : {2, 3, 40}) {
      for (int64_t stride : {len + 5, -(2 * len + 1)}) {
        MPI_Datatype b, v;
        ASSERT_EQ(MPI_Type_contiguous(static_cast<int>(len), MPI_BYTE, &b), MPI_SUCCESS);
        ASSERT_EQ(MPI_Type_create_hvector(n, 1, stride, b, &v), MPI_SUCCESS);
        MPI_Type_free(&b);
        commit(v);
        MPI_Aint tlb, text;
        MPI_Type_get_extent(v, &tlb, &text);
        Layout l{{}, text};
        for (int i = 0; i < n; ++i) l.runs.push_back({i * stride, len});
        for (int count : {1, 4}) {
          checkWindows(v, l, count, len + 2, static_cast<size_t>(len * 3 + n) % 64,
                       "hvector n " + std::to_string(n) + " of " + std::to_string(len) + " stride " +
                           std::to_string(stride) + " count " + std::to_string(count));
          if (testing::Test::HasFatalFailure()) break;
        }
        MPI_Type_free(&v);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

struct Field {
  int64_t disp, len;
};

MPI_Datatype structOf(const std::vector<Field>& f, int64_t extent) {
  std::vector<int> bl;
  std::vector<MPI_Aint> d;
  std::vector<MPI_Datatype> ty;
  for (const Field& x : f) {
    bl.push_back(static_cast<int>(x.len));
    d.push_back(x.disp);
    ty.push_back(MPI_BYTE);
  }
  MPI_Datatype s, r;
  EXPECT_EQ(MPI_Type_create_struct(static_cast<int>(f.size()), bl.data(), d.data(), ty.data(), &s), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_create_resized(s, 0, extent, &r), MPI_SUCCESS);
  MPI_Type_free(&s);
  return commit(r);
}

// Structs of scalars: the field-major kernel over batches of 64 elements,
// counts across batch boundaries, and the element-order fallback of unpack
// when fields overlap each other or elements overlap their neighbours.
TEST(DtKernelsCursor, StructFieldsWindowsAtEveryOffset) {
  struct Case {
    const char* name;
    std::vector<Field> fields;
    int64_t extent;
  };
  const Case cases[] = {
      {"char double int", {{0, 1}, {8, 8}, {16, 4}}, 24},
      {"five odd fields, negative displacement",
       {{-6, 2}, {4, 4}, {13, 1}, {16, 8}, {32, 12}},
       56},
      {"fields out of memory order", {{40, 16}, {0, 3}, {20, 18}, {70, 64}}, 136},
      {"large fields (any-length kernel)", {{0, 5}, {16, 300}, {400, 7}}, 416},
      {"overlapping fields", {{0, 8}, {4, 8}, {20, 2}}, 24},
      {"elements overlap (extent < span)", {{0, 4}, {12, 8}}, 8},
      {"elements overlap, mixed fields", {{0, 2}, {3, 1}, {6, 8}, {20, 12}, {40, 3}}, 16},
  };
  for (const Case& k : cases) {
    for (int count : {1, 3, 64, 65, 130}) {
      MPI_Datatype t = structOf(k.fields, k.extent);
      Layout l{{}, k.extent};
      for (const Field& f : k.fields) l.runs.push_back({f.disp, f.len});
      int64_t size = 0;
      for (const Field& f : k.fields) size += f.len;
      checkWindows(t, l, count, size + 3, static_cast<size_t>(count * 5) % 64,
                   std::string(k.name) + " count " + std::to_string(count));
      MPI_Type_free(&t);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

// Misaligned user buffers at every offset 0..63 (one type per kernel shape).
TEST(DtKernelsCursor, EveryMisalignment) {
  MPI_Datatype a = commit(block(64, 160));
  MPI_Datatype s = structOf({{0, 1}, {8, 8}, {16, 4}}, 24);
  for (size_t mis = 0; mis < 64; ++mis) {
    checkWindows(a, Layout{{{0, 64}}, 160}, 9, 3, mis, "block 64, mis " + std::to_string(mis));
    checkWindows(s, Layout{{{0, 1}, {8, 8}, {16, 4}}, 24}, 70, 3, mis, "struct, mis " + std::to_string(mis));
    if (testing::Test::HasFatalFailure()) break;
  }
  MPI_Type_free(&a);
  MPI_Type_free(&s);
}

// The collectives' way: a message of several MiB packed and unpacked in 64
// KiB windows must equal the whole-message pack, for each kernel shape.
TEST(DtKernelsCursor, LargeMessageIn64KiBWindows) {
  constexpr uint64_t kWindow = 64 * 1024;
  struct Case {
    const char* name;
    MPI_Datatype type;
    int count;
  } cases[4];
  MPI_Datatype v;
  MPI_Type_vector(1 << 18, 1, 2, MPI_DOUBLE, &v);  // 2 MiB of payload, stride 16
  cases[0] = {"vector of doubles", commit(v), 1};
  MPI_Datatype f;
  int sizes[3] = {64, 64, 64}, sub[3] = {64, 64, 1}, start[3] = {0, 0, 7};
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &f);  // stride 512, prefetching
  cases[1] = {"z face", commit(f), 2};
  cases[2] = {"struct", structOf({{0, 1}, {8, 8}, {16, 4}}, 24), 200000};
  // Stride 2 KiB: every element in the same two L1 sets, so unpack takes the
  // fenced loop (writePrefetchFits() is false).
  MPI_Datatype g;
  int gsizes[3] = {16, 16, 256}, gsub[3] = {16, 16, 1}, gstart[3] = {0, 0, 255};
  MPI_Type_create_subarray(3, gsizes, gsub, gstart, MPI_ORDER_C, MPI_DOUBLE, &g);
  cases[3] = {"z face, 2 KiB stride", commit(g), 3};
  for (auto& k : cases) {
    SCOPED_TRACE(k.name);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(k.type, &lb, &ext);
    const shmcoll::dt::Type* t = shmcoll::rt::type(k.type);
    std::vector<uint8_t> src(static_cast<size_t>(ext) * k.count), back(src.size(), 0);
    std::mt19937 rng(5);
    fill(src, rng, true);
    const uint64_t total = t->size * k.count;
    std::vector<uint8_t> whole(total), win(total, 0);
    forEachKernel([&](copy::Kernel kk) {
      SCOPED_TRACE(copy::name(kk));
      // The crowded-stride unpack with and without its store fence, whichever the CPU would choose.
      for (int fence : {0, 1}) {
        SCOPED_TRACE(fence ? "fenced" : "not fenced");
        shmcoll::dt::kern::forceFenceCrowded(fence);
        Cursor c(src.data(), k.count, t);
        c.pack(0, whole.data(), total);
        std::fill(win.begin(), win.end(), 0);
        for (uint64_t pos = 0; pos < total; pos += kWindow) c.pack(pos, &win[pos], std::min(kWindow, total - pos));
        ASSERT_EQ(win, whole);
        std::fill(back.begin(), back.end(), 0);
        Cursor u(back.data(), k.count, t);
        for (uint64_t pos = 0; pos < total; pos += kWindow) u.unpack(pos, &win[pos], std::min(kWindow, total - pos));
        std::vector<uint8_t> again(total);
        Cursor(back.data(), k.count, t).pack(0, again.data(), total);
        ASSERT_EQ(again, whole);
      }
      shmcoll::dt::kern::forceFenceCrowded(-1);
    });
    // Bytes outside the type map stay zero after the unpack.
    std::vector<uint8_t> mask(src.size(), 0);
    {
      std::vector<uint8_t> ones(total, 0xff);
      Cursor(mask.data(), k.count, t).unpack(0, ones.data(), total);
    }
    for (size_t i = 0; i < src.size(); ++i) ASSERT_EQ(back[i], mask[i] ? src[i] : 0) << "byte " << i;
    MPI_Type_free(&k.type);
  }
}

// MPI_Pack / MPI_Unpack at odd positions, a message split over several calls.
TEST(DtKernelsCursor, MpiPackUnpackAtPositions) {
  MPI_Datatype v;
  MPI_Type_vector(50, 3, 7, MPI_INT, &v);  // 12-byte blocks at a 28-byte stride
  commit(v);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(v, &lb, &ext);
  const int count = 5;
  std::vector<int> in(static_cast<size_t>(ext / 4) * count);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * 2654435761u);
  int psize = 0;
  ASSERT_EQ(MPI_Pack_size(count, v, MPI_COMM_WORLD, &psize), MPI_SUCCESS);
  std::vector<uint8_t> whole(static_cast<size_t>(psize) + 3), split(static_cast<size_t>(psize) + 3 + 64, 0x22);
  int pos = 3;
  ASSERT_EQ(MPI_Pack(in.data(), count, v, whole.data(), static_cast<int>(whole.size()), &pos, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(pos, psize + 3);
  // Elements 0-1 at position 3 of a larger buffer, then 2-4 after them.
  pos = 3;
  ASSERT_EQ(MPI_Pack(in.data(), 2, v, split.data(), static_cast<int>(split.size()), &pos, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Pack(reinterpret_cast<char*>(in.data()) + 2 * ext, 3, v, split.data(), static_cast<int>(split.size()),
                     &pos, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(pos, psize + 3);
  ASSERT_EQ(0, std::memcmp(whole.data() + 3, split.data() + 3, static_cast<size_t>(psize)));
  for (size_t i = static_cast<size_t>(psize) + 3; i < split.size(); ++i) ASSERT_EQ(split[i], 0x22);
  // Unpack 1 + 4 elements into a buffer of sentinels.
  std::vector<int> out(in.size(), -1);
  pos = 3;
  ASSERT_EQ(MPI_Unpack(split.data(), static_cast<int>(split.size()), &pos, out.data(), 1, v, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Unpack(split.data(), static_cast<int>(split.size()), &pos, reinterpret_cast<char*>(out.data()) + ext,
                       4, v, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(pos, psize + 3);
  for (int e = 0; e < count; ++e)
    for (int i = 0; i < ext / 4; ++i) {
      const size_t k = static_cast<size_t>(e * ext / 4 + i);
      const bool mapped = i < 50 * 7 && i % 7 < 3;
      ASSERT_EQ(out[k], mapped ? in[k] : -1) << "element " << e << " int " << i;
    }
  MPI_Type_free(&v);
}

}  // namespace
