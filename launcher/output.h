// --tag-output: the ranks' stdout and stderr come through pipes and leave
// shmrun one whole line at a time, prefixed "[1,<rank>]<stdout>: " as Open MPI
// does.  shmrun is the only writer of its stdout/stderr and writes each batch
// of complete lines with one write loop, so lines never interleave mid-line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::launcher {

class OutputPump {
 public:
  // Epoll keys at and above this value belong to the pump (2 per rank).
  static constexpr uint64_t kKeyBase = 1ull << 32;

  OutputPump(int epollFd, uint32_t nranks);
  ~OutputPump();
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Creates the two pipes of `rank` and registers the read ends; returns the
  // write ends (O_CLOEXEC: the child dup2's them onto 1 and 2, then the
  // parent closes them with closeChildEnds).  Throws std::runtime_error.
  void open(uint32_t rank, int* childOut, int* childErr);
  void closeChildEnds(uint32_t rank);

  // An epoll event for `key`: reads what is there and writes complete lines.
  void onEvent(uint64_t key);
  // After `rank` exited: takes what is still in its pipes without waiting
  // (a grandchild may hold them open forever), writes a last partial line
  // with a newline, closes.
  void finish(uint32_t rank);
  void finishAll();

 private:
  struct Stream {
    int fd = -1;        // read end
    int childFd = -1;   // write end until the child has it
    std::string partial;
  };
  // Returns false at EOF or error (the stream is then closed).
  bool pump(uint32_t index, bool untilEmpty);
  void emit(uint32_t index, const char* data, size_t n, bool flushPartial);
  void close(uint32_t index);

  int ep_;
  std::vector<Stream> streams_;  // 2 * rank + (0 stdout, 1 stderr)
};

// Writes all of [data, data+n) to fd, retrying on EINTR/EAGAIN; drops the
// rest silently when the reader is gone (EPIPE), as a terminal would.
void writeAll(int fd, const char* data, size_t n);

}  // namespace shmcoll::launcher
