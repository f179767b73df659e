// The state of a communicator, set up at its first collective and cached in
// an attribute (freed by the attribute's delete callback at MPI_Comm_free, and
// unmapped at MPI_Finalize).
//
// Set-up, collective over the communicator (host calls only, 3 to 5 of them):
//  - intercommunicators are declined without any communication;
//  - MPI_THREAD_MULTIPLE or SHMCOLL_ACCEL=0 decline the communicator;
//  - processes on more than one node (PMPI_Comm_split_type(
//    MPI_COMM_TYPE_SHARED), cut into pretend nodes under SHMCOLL_FAKE_NODES,
//    smaller than the communicator): the hierarchy of nodes.cc, with one
//    segment per node set up as below (MapSegment on the node communicator);
//  - rank 0 creates the segment as a memfd (never a name in /dev/shm) and
//    broadcasts its pid and descriptor number; the others copy the descriptor
//    with pidfd_open + pidfd_getfd and map it.  Where the kernel forbids that,
//    rank 0 creates a POSIX shared-memory object (mode 0600, O_EXCL), the
//    others open it, and rank 0 unlinks it as soon as everybody has tried.
//  - PMPI_Allreduce(MIN) of each step's success, so all agree on the outcome.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "accel.h"
#include "os/cma_cost.h"

namespace shmcoll_accel {

std::atomic<long> g_taken{0}, g_passed{0};
bool g_finalizing = false;

namespace {

int g_keyval = MPI_KEYVAL_INVALID;
CommState* g_mapped = nullptr;  // states with a mapping
std::mutex g_mutex;
// HostProgress: a receive nobody sends to, on a private duplicate of
// MPI_COMM_SELF; testing it runs the host's whole progress engine (MPICH's
// MPI_Iprobe does not run the schedules of its nonblocking collectives).
MPI_Comm g_progress_comm = MPI_COMM_NULL;
MPI_Request g_progress_req = MPI_REQUEST_NULL;
char g_progress_byte;

size_t SlotBytes(int n) {
  constexpr size_t kDefault = 1024 * 1024;  // (only the pages blocks are written to are ever used)
  size_t slot = EnvBytes("SHMCOLL_ACCEL_SLOT_BYTES", kDefault);
  if (slot == 0) slot = kDefault;
  // two halves, each with an alltoall piece of at least one line per rank
  slot = std::max(slot, 2 * kLine * static_cast<size_t>(n));
  return (slot + 2 * kLine - 1) / (2 * kLine) * (2 * kLine);
}

int DeleteState(MPI_Comm, int, void* attr, void*) {
  auto* st = static_cast<CommState*>(attr);
  Forget(st);
  FreeNodes(st);
  Unmap(st);
  delete st;
  return MPI_SUCCESS;
}

char* MapFd(int fd, size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

// The memfd way; the mapping, or nullptr on any rank's failure (agreed).
char* ShareByPidfd(int me, size_t bytes, MPI_Comm comm) {
  long info[3] = {0, -1, 0};  // pid, descriptor, ok
  char* base = nullptr;
  int fd = -1;
  if (me == 0) {
    fd = static_cast<int>(syscall(SYS_memfd_create, "shmcoll-accel", MFD_CLOEXEC));
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0) base = MapFd(fd, bytes);
    info[0] = getpid(), info[1] = fd, info[2] = base != nullptr;
  }
  if (PMPI_Bcast(info, 3, MPI_LONG, 0, comm) != MPI_SUCCESS) info[2] = 0;
  if (me != 0 && info[2]) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(info[0]), 0));
    if (pidfd >= 0) {
      fd = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, static_cast<int>(info[1]), 0));
      close(pidfd);
    }
    if (fd >= 0) base = MapFd(fd, bytes);
  }
  // rank 0 keeps its descriptor open until everybody has its copy
  const bool ok = AllAgree(base != nullptr, comm);
  if (fd >= 0) close(fd);
  if (!ok && base) munmap(base, bytes), base = nullptr;
  return base;
}

// The named way, for kernels without pidfd_getfd (or forbidding it).
char* ShareByName(int me, size_t bytes, MPI_Comm comm) {
  static int counter = 0;
  char name[64];
  long info[3] = {0, 0, 0};  // pid, counter, ok
  char* base = nullptr;
  if (me == 0) {
    info[0] = getpid(), info[1] = ++counter;
    std::snprintf(name, sizeof name, "/shmcoll-accel-%ld-%ld", info[0], info[1]);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) base = MapFd(fd, bytes);
      close(fd);
      if (!base) shm_unlink(name);
    }
    info[2] = base != nullptr;
  }
  if (PMPI_Bcast(info, 3, MPI_LONG, 0, comm) != MPI_SUCCESS) info[2] = 0;
  if (me != 0 && info[2]) {
    std::snprintf(name, sizeof name, "/shmcoll-accel-%ld-%ld", info[0], info[1]);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
      base = MapFd(fd, bytes);
      close(fd);
    }
  }
  PMPI_Barrier(comm);  // everybody has opened it (or failed to)
  if (me == 0 && info[2]) shm_unlink(name);
  const bool ok = AllAgree(base != nullptr, comm);
  if (!ok && base) munmap(base, bytes), base = nullptr;
  return base;
}

CommState* SetUp(MPI_Comm comm) {
  auto* st = new CommState();
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return st;
  PMPI_Comm_size(comm, &st->n);
  PMPI_Comm_rank(comm, &st->me);
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  bool ok = provided != MPI_THREAD_MULTIPLE && Enabled();
  // the node split (into pretend nodes under SHMCOLL_FAKE_NODES, nodes.cc)
  MPI_Comm node = MPI_COMM_NULL;
  int nn = 0;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) node = MPI_COMM_NULL;
  int machine = 0;  // (the machine's processes of comm, before any pretend split)
  if (node != MPI_COMM_NULL) PMPI_Comm_size(node, &machine);
  if (node != MPI_COMM_NULL) node = PretendSplit(node, st->me);
  if (node != MPI_COMM_NULL) PMPI_Comm_size(node, &nn);
  if (!AllAgree(ok && node != MPI_COMM_NULL, comm)) {
    if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
    return st;
  }
  if (nn < st->n) {  // several nodes: the hierarchical path (nodes.cc), which keeps `node`
    SetUpNodes(st, comm, node, machine);
    return st;
  }
  PMPI_Comm_free(&node);
  MapSegment(st, comm);
  return st;
}

// The job's processes on this node as its launcher tells them (Open MPI's
// mpirun, MPICH's Hydra, Slurm's srun), 0 where none does: a communicator of
// a few of them still shares the node's cores with all the others.
int LauncherLocalSize() {
  static const int local = [] {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
      if (const int v = EnvCount(name, INT_MAX - 1)) return v;
    return 0;
  }();
  return local;
}

}  // namespace

bool MapSegment(CommState* st, MPI_Comm comm) {
  st->slot = SlotBytes(st->n);
  st->pushed.assign(static_cast<size_t>(st->n), 0);  // (RunRounds fills it in every round 0)
  // (The node's cores, not this process's affinity: a launcher that binds
  // each process to a core of its own has not oversubscribed them.  The
  // processes that share them: this communicator's, its machine's where it
  // has pretend nodes, and the job's on the node where the launcher says.)
  const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  const int sharing = std::max({st->n, st->on_machine, LauncherLocalSize()});
  st->spin = ncpu > 0 && sharing > ncpu ? 0 : 256;
  st->map_bytes = (sizeof(RankFlags) + st->slot + kEagerPerRank) * static_cast<size_t>(st->n);
  // the eager bound and depth (eager.cc) and the single-copy bound, agreed: a call's path and entry
  // must be the same on every rank
  // (and the bcast's: where the processes outnumber the cores, single copy's
  // extra round cost more than the root's copy into its slot saved up to
  // 128 KiB, N = 3 to 8 on 2 cores, docs/PERFORMANCE.md, 2026-11-30, evening)
  const size_t cma_min = CmaMin(st->spin != 0);
  const size_t bcast_min = st->spin || CmaMinSet() ? cma_min : std::max<size_t>(cma_min, kBcastCrowdedCmaMin);
  long long eager[5] = {static_cast<long long>(std::min(EnvBytes("SHMCOLL_ACCEL_EAGER_MAX", kEagerData), kEagerData)),
                        static_cast<long long>(st->spin ? kEagerDepthAlone : kEagerDepth),
                        static_cast<long long>(std::min<size_t>(cma_min, LLONG_MAX)), st->spin ? 0 : 1,
                        static_cast<long long>(std::min<size_t>(bcast_min, LLONG_MAX))};
  if (PMPI_Allreduce(MPI_IN_PLACE, eager, 5, MPI_LONG_LONG, MPI_MIN, comm) != MPI_SUCCESS)
    eager[0] = eager[2] = eager[3] = eager[4] = 0;
  st->crowded = eager[3] == 1;
  st->bcast_cma_min = static_cast<size_t>(std::max(eager[4], 0LL));
  st->eager = static_cast<size_t>(eager[0]);
  st->eager_depth = static_cast<uint64_t>(std::max(eager[1], 1LL));
  st->cma_min = static_cast<size_t>(std::max(eager[2], 0LL));
  // (SHMCOLL_ACCEL_SHARE=name: the named way only, for its test; the same on every process)
  const char* share = std::getenv("SHMCOLL_ACCEL_SHARE");
  if (!(share && std::strcmp(share, "name") == 0)) st->base = ShareByPidfd(st->me, st->map_bytes, comm);
  if (!st->base) st->base = ShareByName(st->me, st->map_bytes, comm);
  if (!st->base) return false;
  ProbeCma(st, comm);
  st->taken = true;
  if (g_progress_comm == MPI_COMM_NULL && PMPI_Comm_dup(MPI_COMM_SELF, &g_progress_comm) == MPI_SUCCESS) {
    // HostProgress's receive, made here (outside any wait) once per process
    PMPI_Comm_set_errhandler(g_progress_comm, MPI_ERRORS_RETURN);
    PMPI_Irecv(&g_progress_byte, 1, MPI_BYTE, 0, 1, g_progress_comm, &g_progress_req);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  st->next = g_mapped;
  if (g_mapped) g_mapped->prev = st;
  g_mapped = st;
  return true;
}

int EnvCount(const char* name, int max) {
  const char* e = std::getenv(name);
  if (!e) return 0;
  char* end = nullptr;
  const long v = std::strtol(e, &end, 10);
  return end != e && *end == '\0' && v >= 1 && v <= max ? static_cast<int>(v) : 0;
}

size_t EnvBytes(const char* name, size_t dflt) {
  const char* e = std::getenv(name);
  if (!e) return dflt;
  char* end = nullptr;
  unsigned long long x = std::strtoull(e, &end, 0);
  if (end == e) return dflt;
  if (*end == 'k' || *end == 'K') x <<= 10;
  if (*end == 'm' || *end == 'M') x <<= 20;
  return static_cast<size_t>(x);
}

namespace {
size_t CmaMinEnv() {  // SHMCOLL_ACCEL_CMA_MIN, or SIZE_MAX where unset
  static const size_t set = EnvBytes("SHMCOLL_ACCEL_CMA_MIN", SIZE_MAX);
  return set;
}
}  // namespace

bool CmaMinSet() { return CmaMinEnv() != SIZE_MAX; }

size_t CmaMin(bool alone) {
  if (CmaMinSet()) return CmaMinEnv();
  // With a core each, the slots' two copies move every line from one core to
  // the other and back while the reader waits for the writer's piece; one
  // read of process_vm_readv (about a microsecond of set-up) pays from 8 KiB.
  // With more processes than cores a pull holds the reader in the kernel
  // while the writer waits for its turn: the slots pay up to 32 KiB
  // (docs/PERFORMANCE.md, 2026-11-29, evening), and 64 KiB once single copy
  // costs a round more than the slots' one round (2026-11-30, evening).
  return alone ? 8 * 1024 : 64 * 1024;
}

bool CmaRead(long pid, char* dst, const char* src, size_t len) {
  while (len) {
    iovec l{dst, len}, r{const_cast<char*>(src), len};
    const ssize_t got = process_vm_readv(static_cast<pid_t>(pid), &l, 1, &r, 1, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    dst += got, src += got, len -= static_cast<size_t>(got);
  }
  return true;
}

namespace {
volatile uint64_t g_cma_probe = 0x5a17c0de5a17c0deull;
}

// Every process allows the others to read it (Yama's ptrace scope 1 asks
// for that; elsewhere the call changes nothing), publishes its pid and the
// address of a known word, and reads its right neighbour's word; the
// communicator has single copy when every read returned the word.
void ProbeCma(CommState* st, MPI_Comm comm) {
  st->cma = st->cma_slow = false;
  if (!st->cma_min || st->n < 2) return;
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  // (and whether the call is slow here, measured once per process; a set
  // SHMCOLL_ACCEL_CMA_MIN is taken as it is, unless SHMCOLL_CMA_SLOW_FACTOR is set too)
  static const bool slow = (!CmaMinSet() || std::getenv("SHMCOLL_CMA_SLOW_FACTOR")) &&
                           shmcoll::os::processVmReadvSlow(EnvBytes("SHMCOLL_CMA_SLOW_FACTOR", 4));
  long mine[3] = {static_cast<long>(getpid()), static_cast<long>(reinterpret_cast<uintptr_t>(&g_cma_probe)),
                  slow ? 1 : 0};
  std::vector<long> all(3 * static_cast<size_t>(st->n));
  bool ok = PMPI_Allgather(mine, 3, MPI_LONG, all.data(), 3, MPI_LONG, comm) == MPI_SUCCESS;
  if (ok) {
    const size_t r = static_cast<size_t>((st->me + 1) % st->n);
    uint64_t word = 0;
    ok = CmaRead(all[3 * r], reinterpret_cast<char*>(&word),
                 reinterpret_cast<const char*>(static_cast<uintptr_t>(all[3 * r + 1])), sizeof word) &&
         word == g_cma_probe;
  }
  if (!AllAgree(ok, comm)) return;
  st->pids.resize(static_cast<size_t>(st->n));
  long slow_votes = 0;
  for (size_t j = 0; j < st->pids.size(); ++j) st->pids[j] = all[3 * j], slow_votes += all[3 * j + 2];
  st->cma = true;
  // most processes found it slow (the same answer on every one: all saw every vote)
  st->cma_slow = 2 * slow_votes > st->n;
}

void EndJob(MPI_Comm comm) {
  std::fflush(stderr);
  // (several processes that abort at once can hang Open MPI 4.1's mpirun: the lowest rank goes first)
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  usleep(static_cast<useconds_t>(200 + 500 * std::min(rank, 20)) * 1000);
  PMPI_Abort(comm, 1);
  std::abort();
}

bool AllAgree(bool ok, MPI_Comm comm) {
  int mine = ok ? 1 : 0, all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return false;
  return all == 1;
}

void Unmap(CommState* st) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Forget(st);
  if (!st->base) return;
  munmap(st->base, st->map_bytes);
  st->base = nullptr;
  st->taken = false;  // a collective after this (in MPI_Finalize) goes to the host
  if (st->prev) st->prev->next = st->next;
  if (st->next) st->next->prev = st->prev;
  if (g_mapped == st) g_mapped = st->next;
  st->prev = st->next = nullptr;
}

bool Enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SHMCOLL_ACCEL");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
}

CommState* GetState(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, DeleteState, &g_keyval, nullptr) != MPI_SUCCESS)
    return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &value, &found) != MPI_SUCCESS) return nullptr;
  if (found) return static_cast<CommState*>(value);
  CommState* st = SetUp(comm);
  if (PMPI_Comm_set_attr(comm, g_keyval, st) != MPI_SUCCESS) {
    // not cached: the next collective sets up again, collectively like this one
    Unmap(st);
    delete st;
    return nullptr;
  }
  return st;
}

void HostProgress() {
  if (g_progress_req == MPI_REQUEST_NULL) return;
  int done = 0;
  PMPI_Test(&g_progress_req, &done, MPI_STATUS_IGNORE);
}

void UnmapAll() {
  g_finalizing = true;
  if (g_progress_req != MPI_REQUEST_NULL) {
    PMPI_Cancel(&g_progress_req);
    PMPI_Wait(&g_progress_req, MPI_STATUS_IGNORE);
  }
  if (g_progress_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_progress_comm);
  while (true) {
    CommState* st;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      st = g_mapped;
    }
    if (!st) break;
    Unmap(st);
  }
}

}  // namespace shmcoll_accel
