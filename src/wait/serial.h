// MPI_THREAD_MULTIPLE: one lock per process around the library.
//
// When a program asks for MPI_THREAD_MULTIPLE, every MPI call runs under one
// recursive lock of its process (the generated entry points take it,
// api/call.h), so the engine, the handle tables and the progress engine see
// one call at a time, as at MPI_THREAD_SERIALIZED.  What makes that enough
// for threads that block is that no call waits with the lock held: every
// wait of the library (wait::waitUntil) releases it while it spins, yields or
// sleeps and takes it back to test its condition, so a thread blocked in
// MPI_Recv never keeps another thread of its rank from sending, and a
// collective waiting for a peer never keeps another thread from entering a
// collective on another communicator.  Blocking collectives then must not use
// state that two communicators share across such a wait -- the engine's
// lanes and line sets are per rank -- so in a job where any rank asked for
// MPI_THREAD_MULTIPLE no communicator gets engine lines and every blocking
// collective runs as its nonblocking schedule, waited for (runtime/comm.cc).
//
// Wake-ups: peers in other processes wake a rank through its RankCtl::wake
// word, on which every sleeping thread of the rank waits.  A thread of the
// same rank that completes something another thread waits for (a send to a
// receive of this rank, MPI_Grequest_complete, a progress step that finished
// another thread's request) bumps that word when it leaves the lock, if any
// thread of its rank sleeps: the sleeper counted itself before it released
// the lock, so either it saw the change before sleeping or it sees the word
// move.
//
// Without MPI_THREAD_MULTIPLE nothing of this runs: an entry point tests one
// flag that is false.
#pragma once

#include <atomic>
#include <cstdint>

#include "segment/layout.h"

namespace shmcoll::wait {

// True once MPI_THREAD_MULTIPLE was provided (set during MPI_Init, before
// the program can start threads that call MPI).
extern bool gSerialOn;
// This rank's RankCtl, whose wake word the rank's sleeping threads wait on.
extern segment::RankCtl* gSerialSelf;
// Threads of this process sleeping in a wait right now.
extern std::atomic<uint32_t> gLocalSleepers;

void enterSerial();
void leaveSerial();
// For a wait: releases the lock however deeply this thread holds it and
// returns the depth, which reacquireSerial() restores.  0 when this thread
// does not hold it (then both do nothing).
uint32_t releaseSerial();
// releaseSerial() for waitSerial (wait/wait.h), which wakes the rank's
// sleeping threads only when `changed`: when what this thread did under the
// lock since it last let it go may be what they wait for (a progress step
// that did something, or whatever the caller did before it began to wait).
// A waiter that lets the lock go every few pauses or yields would otherwise
// wake every sleeping thread of its rank each time, and they would wake each
// other in turn, all burning the cores their peers need.  `seen`, for a
// caller about to sleep: its look at the wake word, taken before it counted
// itself among the sleepers; when the wake-up this call makes is the only
// change since, *seen moves past it, so the caller does not wake itself.
uint32_t releaseSerialFor(bool changed, uint32_t* seen);
void reacquireSerial(uint32_t depth);
// sched_yield(), with the lock let go meanwhile when this thread holds it.
void yieldSerial();

// The entry points' guard: takes the lock for the call when MPI_THREAD_MULTIPLE is on.
class Serial {
 public:
  Serial() : on_(__builtin_expect(gSerialOn, 0)) {
    if (on_) enterSerial();
  }
  ~Serial() {
    if (on_) leaveSerial();
  }
  Serial(const Serial&) = delete;
  Serial& operator=(const Serial&) = delete;

 private:
  const bool on_;
};

}  // namespace shmcoll::wait
