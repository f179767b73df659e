// Waiting (wait/wait.h): the futex sleep is counted in the segment's
// sleeper count, and waitStream spins only while the ranks not asleep fit
// the cores.  Threads stand in for ranks; the RankCtl and the counter live in
// ordinary memory.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "wait/wait.h"

namespace shmcoll::wait {
namespace {

using Clock = std::chrono::steady_clock;

// Installs a policy and a crowd for one test and restores the defaults after.
class WaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = policy();
    savedCrowd_ = gCrowd;
  }
  void TearDown() override {
    setPolicy(saved_);
    gCrowd = savedCrowd_;
  }
  void use(uint32_t spins, uint32_t yields, long sleepNs, uint32_t streamSpinNs, uint32_t ranks, uint32_t cores) {
    WaitPolicy p;
    p.spins = spins;
    p.yields = yields;
    p.sleepNs = sleepNs;
    p.streamSpinNs = streamSpinNs;
    setPolicy(p);
    gCrowd = {&sleepers_, ranks, cores};
  }
  // Waits up to `limit` for `cond`; false on time-out.
  template <class C>
  static bool eventually(C&& cond, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    const auto end = Clock::now() + limit;
    while (!cond()) {
      if (Clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
  }

  // A peer that waits (up to `limit`) until `asleep` says the waiter sleeps,
  // then makes the condition true and wakes it; `why` is the failure message.
  template <class C>
  std::thread wakeOnceAsleep(C asleep, const char* why,
                             std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    return std::thread([this, asleep, why, limit] {
      const bool seen = eventually(asleep, limit);
      EXPECT_TRUE(seen) << why;
      flag_.store(1, std::memory_order_release);
      wakePeer(&self_);
    });
  }
  bool flagSet() const { return flag_.load(std::memory_order_acquire) == 1; }

  alignas(64) segment::RankCtl self_{};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<int> flag_{0};

 private:
  WaitPolicy saved_;
  Crowd savedCrowd_;
};

TEST_F(WaitTest, SleeperIsCountedWhileAsleepAndWokenByItsPeer) {
  use(0, 0, 60L * 1000000000L, 0, 4, 2);  // straight to the futex, no time-out within the test
  std::thread peer([&] {
    const bool seen = eventually([&] { return sleepers_.load() == 1; });
    EXPECT_TRUE(seen) << "the waiter never counted itself asleep";
    EXPECT_EQ(self_.sleeping.load(), 1u);
    flag_.store(1, std::memory_order_release);
    wakePeer(&self_);
  });
  const auto t0 = Clock::now();
  EXPECT_EQ(waitUntil(&self_, [&] { return flag_.load(std::memory_order_acquire) == 1; }), 0);
  peer.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));  // woken, not timed out
  EXPECT_EQ(sleepers_.load(), 0u);
  EXPECT_EQ(self_.sleeping.load(), 0u);
}

// A condition may act when it holds: MPI_Mprobe's takes the message it finds.
// Asked again after saying yes, it would take a second message (or none) and
// the first would be lost; the wait must return on the first yes, also when
// that yes comes in the look just before the futex sleep.  The condition
// here holds once at call `first` (it "takes the only message") and again
// from call first + 4, so a wait that asks again returns later with `taken` 2
// or more instead of hanging.  Both the plain wait and the one at
// MPI_THREAD_MULTIPLE (waitSerial; this thread holds no lock, so releasing it
// does nothing).
TEST_F(WaitTest, AConditionIsNotAskedAgainOnceItHeld) {
  const ProgressHook savedHook = gProgressHook;
  gProgressHook = nullptr;
  for (bool serial : {false, true}) {
    use(0, 0, 1000000, 0, 1, 1);  // no spins, no yields: straight to the look before the sleep
    gSerialOn = serial;
    // The plain wait asks at entry (1) and before the sleep (2); waitSerial
    // asks at entry (1), at the top of its round (2) and before the sleep (3).
    const int first = serial ? 3 : 2;
    int calls = 0, taken = 0;
    const int rc = waitUntil(&self_, [&] {
      ++calls;
      if (calls != first && calls < first + 4) return false;
      ++taken;
      return true;
    });
    gSerialOn = false;
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(taken, 1) << (serial ? "waitSerial" : "waitUntil") << " asked again after the condition held";
    EXPECT_EQ(calls, first) << (serial ? "waitSerial" : "waitUntil");
    EXPECT_EQ(self_.sleeping.load(), 0u);
  }
  gProgressHook = savedHook;
}

// At MPI_THREAD_MULTIPLE a waiter about to sleep counts itself among its
// rank's sleepers and lets the process lock go, which wakes the rank's
// sleepers when it may have changed what they wait for.  It must not count
// as one of them: it woke itself, its futex wait returned at once, and it
// looped without sleeping (two such threads took both cores of the machine
// and the job crawled).  With a first futex time-out of 5 ms, doubling, a
// waiter that sleeps asks its condition a few times in 80 ms; one that wakes
// itself asks it thousands of times.
TEST_F(WaitTest, ASerialWaiterDoesNotWakeItself) {
  const ProgressHook savedHook = gProgressHook;
  gProgressHook = nullptr;
  use(0, 0, 5000000, 0, 1, 1);  // no spins, no yields: straight to the sleep
  gSerialOn = true;
  gSerialSelf = &self_;
  enterSerial();
  const auto end = Clock::now() + std::chrono::milliseconds(80);
  int calls = 0;
  const int rc = waitUntil(&self_, [&] {
    ++calls;
    return Clock::now() > end;
  });
  leaveSerial();
  gSerialOn = false;
  gSerialSelf = nullptr;
  gProgressHook = savedHook;
  EXPECT_EQ(rc, 0);
  EXPECT_LT(calls, 200) << "the waiter did not sleep between its looks";
  EXPECT_EQ(gLocalSleepers.load(), 0u);
  EXPECT_EQ(self_.sleeping.load(), 0u);
}

TEST_F(WaitTest, StreamWaitSpinsWhileTheAwakeRanksFitTheCores) {
  // 4 ranks, 2 cores, 2 asleep: the 2 awake fit, so the wait spins (budget
  // 4 s) and sees a change nobody wakes it for.  Had it slept, only the
  // futex time-out (60 s) would end it.
  use(0, 0, 60L * 1000000000L, 4000000000u, 4, 2);
  sleepers_.store(2);
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    flag_.store(1, std::memory_order_release);  // (no wake-up)
  });
  const auto t0 = Clock::now();
  EXPECT_EQ(waitStream(&self_, [&] { return flagSet(); }), 0);
  peer.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(15));
  EXPECT_EQ(sleepers_.load(), 2u);  // it never slept
}

TEST_F(WaitTest, StreamWaitSleepsAtOnceWhenTheAwakeRanksOutnumberTheCores) {
  // 8 ranks, 2 cores, nobody asleep: no spin (budget 4 s), straight to the futex.
  use(0, 0, 60L * 1000000000L, 4000000000u, 8, 2);
  std::thread peer = wakeOnceAsleep([this] { return sleepers_.load() == 1; },
                                    "the stream wait spun instead of sleeping", std::chrono::milliseconds(2000));
  EXPECT_EQ(waitStream(&self_, [&] { return flagSet(); }), 0);
  peer.join();
  EXPECT_EQ(sleepers_.load(), 0u);
}

TEST_F(WaitTest, StreamWaitFallsBackToSleepingAfterItsBudget) {
  // The awake ranks fit, but the budget (1 ms) runs out first: then it sleeps.
  use(0, 0, 60L * 1000000000L, 1000000u, 2, 2);
  std::thread peer =
      wakeOnceAsleep([this] { return sleepers_.load() == 1; }, "the stream wait never went to sleep");
  EXPECT_EQ(waitStream(&self_, [&] { return flagSet(); }), 0);
  peer.join();
  EXPECT_EQ(sleepers_.load(), 0u);
}

TEST_F(WaitTest, WithoutACrowdStreamWaitIsWaitUntil) {
  use(0, 0, 60L * 1000000000L, 4000000000u, 0, 0);
  gCrowd = {};  // not oversubscribed: nothing is counted, nothing extra spins
  std::thread peer = wakeOnceAsleep([this] { return self_.sleeping.load() == 1; }, "the wait never slept");
  EXPECT_EQ(waitStream(&self_, [&] { return flagSet(); }), 0);
  peer.join();
  EXPECT_EQ(sleepers_.load(), 0u);
}

}  // namespace
}  // namespace shmcoll::wait
