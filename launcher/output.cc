#include "launcher/output.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace shmcoll::launcher {

namespace {
// A line longer than this is cut and written in pieces, each tagged, rather
// than buffered without bound.
constexpr size_t kMaxLine = 64 * 1024;
}  // namespace

void writeAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w > 0) {
      data += w;
      n -= static_cast<size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else {
      return;  // EPIPE and friends: nobody reads any more
    }
  }
}

OutputPump::OutputPump(int epollFd, uint32_t nranks) : ep_(epollFd), streams_(2 * size_t{nranks}) {}

OutputPump::~OutputPump() {
  for (uint32_t i = 0; i < streams_.size(); ++i) {
    close(i);
    if (streams_[i].childFd >= 0) ::close(streams_[i].childFd);
  }
}

void OutputPump::open(uint32_t rank, int* childOut, int* childErr) {
  for (uint32_t k = 0; k < 2; ++k) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("cannot create output pipes for rank ") + std::to_string(rank) + ": " +
                               strerror(errno));
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    uint32_t idx = 2 * rank + k;
    streams_[idx].fd = p[0];
    streams_[idx].childFd = p[1];
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kKeyBase + idx;
    if (epoll_ctl(ep_, EPOLL_CTL_ADD, p[0], &ev) != 0)
      throw std::runtime_error(std::string("epoll_ctl: ") + strerror(errno));
  }
  *childOut = streams_[2 * rank].childFd;
  *childErr = streams_[2 * rank + 1].childFd;
}

void OutputPump::closeChildEnds(uint32_t rank) {
  for (uint32_t k = 0; k < 2; ++k) {
    Stream& s = streams_[2 * rank + k];
    if (s.childFd >= 0) ::close(s.childFd);
    s.childFd = -1;
  }
}

void OutputPump::onEvent(uint64_t key) {
  uint64_t idx = key - kKeyBase;
  if (idx < streams_.size()) pump(static_cast<uint32_t>(idx), false);
}

bool OutputPump::pump(uint32_t index, bool untilEmpty) {
  Stream& s = streams_[index];
  char buf[65536];
  // One read per event keeps a chatty rank from starving the others; when
  // finishing, read until the pipe is empty.
  do {
    if (s.fd < 0) return false;
    ssize_t n = ::read(s.fd, buf, sizeof buf);
    if (n > 0) {
      emit(index, buf, static_cast<size_t>(n), false);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    // EOF or error: write what is left and stop watching.
    emit(index, nullptr, 0, true);
    close(index);
    return false;
  } while (untilEmpty);
  return true;
}

void OutputPump::emit(uint32_t index, const char* data, size_t n, bool flushPartial) {
  Stream& s = streams_[index];
  const uint32_t rank = index / 2;
  const bool isErr = index % 2;
  const std::string prefix = "[1," + std::to_string(rank) + (isErr ? "]<stderr>: " : "]<stdout>: ");
  std::string out;
  s.partial.append(data ? data : "", n);
  size_t start = 0;
  for (;;) {
    size_t nl = s.partial.find('\n', start);
    if (nl == std::string::npos) {
      if (s.partial.size() - start >= kMaxLine) nl = start + kMaxLine - 1;
      else break;
    }
    out += prefix;
    out.append(s.partial, start, nl - start);
    out += '\n';
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (flushPartial && !s.partial.empty()) {
    out += prefix + s.partial + '\n';
    s.partial.clear();
  }
  if (!out.empty()) writeAll(isErr ? 2 : 1, out.data(), out.size());
}

void OutputPump::close(uint32_t index) {
  Stream& s = streams_[index];
  if (s.fd < 0) return;
  epoll_ctl(ep_, EPOLL_CTL_DEL, s.fd, nullptr);
  ::close(s.fd);
  s.fd = -1;
}

void OutputPump::finish(uint32_t rank) {
  for (uint32_t k = 0; k < 2; ++k) {
    uint32_t idx = 2 * rank + k;
    if (pump(idx, true)) {
      emit(idx, nullptr, 0, true);
      close(idx);
    }
  }
}

void OutputPump::finishAll() {
  for (uint32_t r = 0; r < streams_.size() / 2; ++r) finish(r);
}

}  // namespace shmcoll::launcher
