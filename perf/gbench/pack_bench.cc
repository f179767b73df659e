// Pack and unpack throughput of the datatype engine against memcpy of the
// same number of bytes; bytes_per_second counts packed (payload) bytes.
//
//   pack/vec_d_s2_bl<B>     vector(N/B, B, 2B, double): blocks of B doubles, stride 2B (B = 1, 8, 64)
//   pack/struct_cdi         N of struct {char@0, double@8, int@16} (extent 24, 13 payload bytes)
//   pack/face_<x|y|z>       one face of a 256^3 C-order array of doubles (512 KiB of payload):
//                           x: [i,*,*] one run; y: [*,j,*] 256 runs of 2 KiB; z: [*,*,k] 65536 doubles, stride 2 KiB
//   pack_chunked/...        the same streamed through 64 KiB windows, as the collectives do
//   unpack/...              the reverse direction
//   memcpy/<bytes>          the reference: one memcpy of the payload size
//
// Human table on stdout; for CSV add --benchmark_out=pack.csv --benchmark_out_format=csv.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/types.h"
#include "dt/datatype.h"

namespace {

using shmcoll::dt::Cursor;
using shmcoll::dt::Type;

constexpr size_t kVecDoubles = size_t{1} << 21;  // 16 MiB of payload for the vectors
constexpr int kCube = 256;
constexpr size_t kChunk = 64 * 1024;

char* arena(int which, size_t bytes) {
  static std::vector<char*> bufs(4, nullptr);
  static std::vector<size_t> sizes(4, 0);
  if (sizes[which] < bytes) {
    std::free(bufs[which]);
    bufs[which] = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
    std::memset(bufs[which], which + 1, bytes);
    sizes[which] = bytes;
  }
  return bufs[which];
}

struct Case {
  MPI_Datatype type;
  int count;
};

Case vectorCase(int bl) {
  MPI_Datatype t;
  MPI_Type_vector(static_cast<int>(kVecDoubles / bl), bl, 2 * bl, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return {t, 1};
}

Case structCase() {
  int bl[3] = {1, 1, 1};
  MPI_Aint d[3] = {0, 8, 16};
  MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
  MPI_Type_create_struct(3, bl, d, ty, &t);
  MPI_Type_commit(&t);
  return {t, 1 << 20};  // 13 MiB of payload
}

Case faceCase(int axis) {
  int sizes[3] = {kCube, kCube, kCube}, sub[3] = {kCube, kCube, kCube}, start[3] = {0, 0, 0};
  sub[axis] = 1;
  start[axis] = kCube / 2;
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return {t, 1};
}

void run(benchmark::State& st, Case c, bool pack, bool chunked) {
  const Type* t = shmcoll::rt::type(c.type);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(c.type, &lb, &ext);
  const size_t span = static_cast<size_t>(ext) * c.count;
  char* user = arena(0, span);
  Cursor cur(user, static_cast<uint64_t>(c.count), t);
  const uint64_t total = cur.totalBytes();
  char* packed = arena(1, total);
  for (auto _ : st) {
    if (chunked) {
      for (uint64_t pos = 0; pos < total; pos += kChunk) {
        const uint64_t n = std::min<uint64_t>(kChunk, total - pos);
        if (pack)
          cur.pack(pos, packed + pos, n);
        else
          cur.unpack(pos, packed + pos, n);
      }
    } else if (pack) {
      cur.pack(0, packed, total);
    } else {
      cur.unpack(0, packed, total);
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * total));
  st.SetLabel(shmcoll::dt::tierName(t->tier));
}

void memcpyRef(benchmark::State& st) {
  const size_t n = static_cast<size_t>(st.range(0));
  char* d = arena(2, n);
  char* s = arena(3, n);
  for (auto _ : st) {
    std::memcpy(d, s, n);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * n));
}

int registerAll() {
  struct Named {
    const char* name;
    Case (*make)();
  };
  static const Named kCases[] = {
      {"vec_d_s2_bl1", [] { return vectorCase(1); }},
      {"vec_d_s2_bl8", [] { return vectorCase(8); }},
      {"vec_d_s2_bl64", [] { return vectorCase(64); }},
      {"struct_cdi", [] { return structCase(); }},
      {"face_x", [] { return faceCase(0); }},
      {"face_y", [] { return faceCase(1); }},
      {"face_z", [] { return faceCase(2); }},
  };
  for (const Named& n : kCases) {
    Case c = n.make();
    for (int dir = 0; dir < 2; ++dir)
      for (int chunk = 0; chunk < 2; ++chunk) {
        std::string name = std::string(dir == 0 ? "pack" : "unpack") + (chunk ? "_chunked/" : "/") + n.name;
        benchmark::RegisterBenchmark(name.c_str(), run, c, dir == 0, chunk == 1)->UseRealTime();
      }
  }
  // The payload sizes above: 16 MiB (vectors), 13 MiB (struct), 512 KiB (faces).
  benchmark::RegisterBenchmark("memcpy", memcpyRef)->Arg(512 << 10)->Arg(13 << 20)->Arg(16 << 20)->UseRealTime();
  return 0;
}
const int gRegistered = registerAll();

}  // namespace
