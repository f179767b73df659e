// The datatype engine's interface to the rest of the library.
//
// A Type describes one element's type map.  All analysis happens once, when a
// type is built or committed: size, lb/ub/extent, true bounds, contiguity, the
// compact loop description (dt/node.h) and, at commit, the flattened block
// list and the pack tier are cached on the Type.  The collectives see data
// only as a packed byte stream: a Cursor over (buffer, count, type) packs or
// unpacks any window [pos, pos+len) of that stream, so a message of any size
// streams through fixed-size mailbox slots with no staging copy of the whole
// message.
//
// Bounds follow the MPI standard's definition of lb/ub markers (MPI-4.0
// section 5.1.7): MPI_Type_create_resized puts explicit markers in the type
// map and they are sticky: a struct whose children carry markers takes its
// lb/ub from the markers only.  Open MPI does the same; MPICH instead takes
// min/max over all children.  Without markers, MPI_Type_create_struct pads the
// extent up to the largest alignment of the basic types it contains (the
// standard's "epsilon"), as both Open MPI and MPICH do; the other
// constructors do not pad (as MPICH; Open MPI pads byte-strided hvector and
// hindexed too).  See docs in dt/build.cc.
//
// This header is free of MPI handles: the runtime's handle table
// (runtime/types.h) says which handle names which Type.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shmcoll::dt {

struct Node;  // the compact loop description, dt/node.h

// One contiguous run of bytes in an element's type map, relative to the
// element's origin (the buffer address for element 0).
struct Block {
  int64_t disp;
  uint64_t len;
};

// How pack and unpack move one element, chosen at commit (reported by tests
// and benchmarks; the walker itself dispatches on the node kinds).
enum class Tier : uint8_t {
  kEmpty,      // no data
  kContig,     // count elements are one run: one copy
  kBlocks,     // few or large blocks: one copy::copy per block
  kRegular,    // many small blocks with a fixed length and stride: fixed-size loops
  kIrregular,  // small blocks of varying length (structs): per-element block table
};
const char* tierName(Tier t);

// Combiners, as MPI_Type_get_envelope reports them (values equal MPI's).
enum Combiner : int {
  kNamed = 1, kDup, kContiguous, kVector, kHvector, kIndexed, kHindexed, kIndexedBlock,
  kHindexedBlock, kStruct, kSubarray, kDarray, kResized
};

class Type {
 public:
  // Cached properties of one element.
  uint64_t size = 0;        // bytes of data
  int64_t lb = 0, ub = 0;   // bounds (MPI_Type_get_extent: lb, ub - lb)
  int64_t extent() const { return ub - lb; }
  int64_t trueLb = 0, trueUb = 0;  // bounds of the bytes actually touched
  // True when `count` consecutive elements form one run of count*size bytes
  // starting at trueLb (so a whole message is one memcpy).
  bool contiguous = false;
  bool committed = false;
  bool builtin = false;
  // Flattened type map of one element, in type-map order, adjacent runs
  // merged; filled at commit.  Left empty (blocksComplete false) when the
  // element has more than kMaxFlatBlocks runs: the Cursor never needs it.
  std::vector<Block> blocks;
  bool blocksComplete = false;
  uint64_t numBlocks = 0;  // runs per element (exact when blocksComplete)

  std::string name;
  int handle = 0;  // the front end's handle for this type (0: none, or freed)

  // ---- engine state ------------------------------------------------------
  bool markers = false;     // the type map holds explicit lb/ub markers (resized)
  uint32_t align = 1;       // largest alignment of the basic types inside
  uint64_t elements = 0;    // basic elements per element (pair types count 2)
  Tier tier = Tier::kEmpty;
  std::shared_ptr<const Node> root;  // nullptr when size == 0

  // Type signature as a run-length list: `count` copies of `type`'s signature
  // (builtin types: empty).  MPI_Get_elements walks it.
  struct SigPart {
    uint64_t count;
    const Type* type;
  };
  std::vector<SigPart> sig;

  // MPI_Type_get_envelope / get_contents: the constructor's arguments.  A
  // large-count (_c) constructor records its counts and displacements in
  // `counts` (MPI_Type_get_contents_c's array_of_large_counts); only
  // MPI_Type_get_envelope_c / get_contents_c may then describe the type.
  int combiner = kNamed;
  std::vector<int> ints;
  std::vector<int64_t> addrs;
  std::vector<int64_t> counts;
  std::vector<Type*> kids;  // each holds a reference (retain/release)

  // References: one for a live handle, one for each use by another type (as
  // a child).  Builtin types are never counted or freed.
  int refs = 0;
  // MPI_Type_free calls still owed on the handle (MPI_Type_get_contents hands
  // out the same handle again and counts it here).
  int handleRefs = 0;
};

constexpr size_t kMaxFlatBlocks = 1 << 16;

// The predefined byte type (MPI_BYTE), for blocks of raw bytes.
const Type* byteType();

// A predefined type: `blocks` of one element (pair types have two, with a
// hole between), `extent` and alignment as the C ABI lays it out.  `name`
// is what MPI_Type_get_name reports.
Type makeNamed(const char* name, int64_t extent, uint32_t align, std::vector<Block> blocks);

// Reference counting for derived types (no-ops for builtins), under
// refMutex(), which also guards the runtime's handle table.
std::recursive_mutex& refMutex();
void retain(const Type* t);
void release(const Type* t);

// ---- constructors ----------------------------------------------------------
// Each returns kOk and a new uncommitted Type with refs == 0 in *out (the
// caller registers it, which takes the handle reference), or an MPI error
// class with the reason recorded by fail().  Arguments are already checked
// by the API layer for sign, range and handle validity; these check what
// needs the engine: a size past the largest MPI_Count (err::kCount), bounds
// past the 64-bit address range (err::kArg), darray block sizes.
// Displacements and strides are in bytes.
int makeContiguous(uint64_t count, const Type* old, Type** out);
int makeHvector(uint64_t count, uint64_t blocklen, int64_t strideBytes, const Type* old, Type** out);
int makeHindexed(uint64_t count, const uint64_t* blocklens, const int64_t* dispBytes, const Type* old, Type** out);
int makeHindexedBlock(uint64_t count, uint64_t blocklen, const int64_t* dispBytes, const Type* old, Type** out);
int makeStruct(uint64_t count, const uint64_t* blocklens, const int64_t* dispBytes, const Type* const* types,
               Type** out);
int makeResized(const Type* old, int64_t lb, int64_t extent, Type** out);
int makeDup(const Type* old, Type** out);
// order: 0 = C (row major), 1 = Fortran (column major).
int makeSubarray(int ndims, const int64_t* sizes, const int64_t* subsizes, const int64_t* starts, int order,
                 const Type* old, Type** out);
// distribs: 0 block, 1 cyclic, 2 none; dargs: -1 for the default.
int makeDarray(int size, int rank, int ndims, const int64_t* gsizes, const int* distribs, const int* dargs,
               const int* psizes, int order, const Type* old, Type** out);

// Records the combiner and the integer, address and large-count arguments
// for MPI_Type_get_contents(_c) (the constructors record the datatype
// arguments).
void setContents(Type* t, int combiner, std::vector<int> ints, std::vector<int64_t> addrs,
                 std::vector<int64_t> counts = {});
// Flattens, merges and picks the pack tier (MPI_Type_commit).  Idempotent.
void commit(Type* t);

// Basic elements in the first `bytes` bytes of the packed stream of `t`
// repeated as needed; *exact is false when `bytes` ends inside a basic element.
uint64_t elementsIn(const Type* t, uint64_t bytes, bool* exact);

// Iterates the contiguous memory runs that hold bytes [pos, pos+len) of the
// packed stream of (buf, count, type), in stream order.  There is no position
// state to go stale: every call seeks from the loop description, which costs a
// division per loop level and a binary search per index list (O(depth),
// independent of the message size), so resuming at the previous end or
// anywhere else costs the same few instructions.
class Cursor {
 public:
  Cursor() = default;
  Cursor(const void* buf, uint64_t count, const Type* type);

  uint64_t totalBytes() const { return total_; }
  bool contiguous() const { return type_ == nullptr || type_->contiguous; }
  // Address of stream byte 0 when contiguous().
  char* contiguousBase() const { return base_ + (type_ ? type_->trueLb : 0); }

  // Copies stream bytes [pos, pos+len) out of the user buffer into dst.
  void pack(uint64_t pos, void* dst, uint64_t len);
  // Copies len bytes from src into stream bytes [pos, pos+len) of the user buffer.
  void unpack(uint64_t pos, const void* src, uint64_t len);
  // Fills up to maxIov iovecs describing stream bytes [pos, pos+len); returns
  // the number filled and sets *covered to the bytes they describe.
  size_t iov(uint64_t pos, uint64_t len, struct iovec* out, size_t maxIov, uint64_t* covered);

 private:
  char* base_ = nullptr;
  const Type* type_ = nullptr;
  uint64_t count_ = 0;
  uint64_t total_ = 0;
};


}  // namespace shmcoll::dt
