// Point-to-point messages between ranks, and the requests that track them.
//
// Transport (the cells and queues of segment/layout.h):
//  - every rank owns kP2pCells cells of 4 KiB in its own area; to send, it
//    fills a free cell and links it into the receiver's queue (one exchange on
//    the queue's tail), then wakes the receiver if it sleeps;
//  - the receiver pops cells in arrival order, so messages from one sender
//    keep their order (MPI's non-overtaking rule) and MPI_ANY_SOURCE sees
//    them in arrival order; it copies what it cannot deliver yet into private
//    memory (the unexpected list) and frees the cell at once, so a sender's
//    cells are never held by a message nobody has asked for.
//
// Protocols, chosen per message by its packed size:
//  - eager (size <= one cell's payload): the data travels in the cell;
//  - rendezvous (larger): the cell carries only the envelope (RTS).  When a
//    receive matches, the receiver pulls the data straight from the sender's
//    buffer with process_vm_readv when the sender's layout is contiguous and
//    single-copy is allowed (then sends FIN), otherwise it answers CTS and
//    the sender streams the packed bytes through cells (DATA), which the
//    receiver unpacks into its layout as they come.
//  - synchronous sends (MPI_Ssend) that go eager ask for an ACK at the match.
//
// All of it advances in progress(), which every wait of the library runs
// (wait::gProgressHook), never in a thread of its own.  Control messages
// and data that find no free cell wait in a local FIFO, in order.
//
// This layer speaks of contexts, communicator ranks and world ranks; MPI
// handles stay in api/.
#pragma once

#include <cstdint>
#include <vector>

#include "dt/datatype.h"

namespace shmcoll::p2p {

constexpr int kAnySource = -2;  // MPI_ANY_SOURCE
constexpr int kAnyTag = -1;     // MPI_ANY_TAG

// Contexts at or above this bit carry the library's own traffic (nonblocking
// collective schedules), never matched by user receives.
constexpr uint32_t kInternalCtx = 0x80000000u;

struct Status {
  int source = kAnySource;
  int tag = kAnyTag;
  int error = 0;           // an MPI error class, 0 for success
  bool cancelled = false;
  uint64_t bytes = 0;      // bytes received (MPI_Get_count)
  uint64_t sent = 0;       // bytes the sender sent (more than `bytes` when truncated)
  const char* why = nullptr;  // static text saying why `error`, when the operation knows
};

class Request {
 public:
  enum class Kind : uint8_t { kSend, kRecv, kOther };
  explicit Request(Kind k) : kind(k) {}
  virtual ~Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  const Kind kind;
  bool done = false;
  bool freed = false;   // MPI_Request_free: the engine deletes it when it completes
  Status status;
  // kOther requests registered with addActive() are stepped by progress();
  // step() returns true when it did something.
  virtual bool step() { return false; }
  // MPI_Cancel; true if cancelled.
  virtual bool cancel() { return false; }
  // A kOther request that sends and receives on context `ctx` over several
  // steps (a schedule): its id must stay taken until the request is done.
  virtual bool usesContext(uint32_t ctx) const {
    (void)ctx;
    return false;
  }
};

enum class Mode : uint8_t { kStandard, kSync };

// Where a message is addressed: the receiver's world rank, the matching
// context, and the sender's rank as the receiver names it.
struct Envelope {
  uint32_t destWorld = 0;
  uint32_t ctx = 0;
  int32_t srcRank = 0;
  int32_t tag = 0;
};

// Sets up this rank's queue state and installs the progress hook.  Called
// once the segment is mapped.
void init(bool oversubscribed);

// Starts a send of (buf, count, type).  Returns the request (owned by the
// caller until it calls release()).  The user buffer must stay untouched
// until the request is done.
Request* isend(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode);
// Blocking send: eager messages go out without a request.  Returns 0 or an
// error class (job teardown).
int send(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode);

// Starts a receive on context `ctx` from `source` (a communicator rank or
// kAnySource) with `tag` (or kAnyTag).
Request* irecv(void* buf, uint64_t count, const dt::Type* type, uint32_t ctx, int source, int tag);

// A message taken out of matching by MPI_Mprobe / MPI_Improbe.
struct Message;
// Looks for a matching message without receiving it; fills *st (bytes is the
// message size).  With `take`, removes it from matching and returns it in *msg.
bool iprobe(uint32_t ctx, int source, int tag, Status* st, Message** msg);
// Receives a message taken by iprobe(take).  Consumes `msg`.
Request* imrecv(void* buf, uint64_t count, const dt::Type* type, Message* msg);

// Advances everything; true when something happened.
bool progress();
// For polling calls (MPI_Test, MPI_Iprobe, ...) that found nothing: with more
// ranks than cores, gives the core to a peer that may be the one we wait for.
void idle();
// Waits until `r` is done (running progress).  Returns 0 or an error class.
int wait(Request* r);
// Waits until pred() holds, running progress.
int waitFor(bool (*pred)(void*), void* arg);

// Registers a kOther request to be stepped by progress() until done.
void addActive(Request* r);
// Hands a request back: deleted now if done, else when it completes.
void release(Request* r);

// Whether an operation of this rank still needs context id `id`: a receive
// posted on it (or on its internal context), or an active request that uses
// it.  MPI_Comm_free keeps the id taken until none does.
bool contextBusy(uint32_t id);

// Cells in flight from this rank (tests).
uint32_t cellsInUse();

}  // namespace shmcoll::p2p
