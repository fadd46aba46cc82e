#include "ipc_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "host.h"
#include "registry.h"

namespace ctxbench {
namespace ipc {
namespace {

void Stamp(char* msg, int64_t size, uint64_t seq) {
  if (size >= 8) std::memcpy(msg, &seq, 8);
  else msg[0] = static_cast<char>(seq);
}

bool StampOk(const char* msg, int64_t size, uint64_t seq) {
  if (size >= 8) {
    uint64_t got;
    std::memcpy(&got, msg, 8);
    return got == seq;
  }
  return msg[0] == static_cast<char>(seq);
}

inline void Relax(int& polls) {
  CpuRelax();
  if (++polls >= 100) polls = 0, sched_yield();
}

}  // namespace

std::string Open(Channel& c) {
  if (pipe2(c.ctl, O_CLOEXEC) != 0 || pipe2(c.ack, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  switch (c.o.kind) {
    case Kind::kPipe:
      if (pipe2(c.data, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
      break;
    case Kind::kUnix:
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c.data) != 0)
        return std::string("socketpair(AF_UNIX): ") + std::strerror(errno);
      break;
    case Kind::kUdp: {
      c.udp_rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (c.udp_rx < 0) return std::string("socket(AF_INET, SOCK_DGRAM): ") + std::strerror(errno);
      int want = 4 << 20;
      setsockopt(c.udp_rx, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);  // capped by net.core.rmem_max
      c.udp_addr.sin_family = AF_INET;
      c.udp_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t len = sizeof c.udp_addr;
      if (bind(c.udp_rx, reinterpret_cast<sockaddr*>(&c.udp_addr), sizeof c.udp_addr) != 0 ||
          getsockname(c.udp_rx, reinterpret_cast<sockaddr*>(&c.udp_addr), &len) != 0)
        return std::string("cannot bind a UDP socket on 127.0.0.1: ") + std::strerror(errno);
      int rcvbuf = 0;
      len = sizeof rcvbuf;
      getsockopt(c.udp_rx, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
      // Keep the datagrams in flight well inside the receive buffer (each costs its size plus an skb).
      c.window = std::clamp<int64_t>(rcvbuf / (2 * (c.o.size + 1024)), 1, 256);
      if (!c.o.new_socket) {
        c.udp_tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (c.udp_tx < 0) return std::string("socket: ") + std::strerror(errno);
      }
      break;
    }
    case Kind::kShm: {
      c.slot_bytes = (static_cast<uint64_t>(c.o.size) + 63) & ~uint64_t{63};
      c.capacity = 1;
      while (c.capacity * 2 * c.slot_bytes <= kRingBytes && c.capacity < 1024) c.capacity *= 2;
      c.capacity = std::max<uint64_t>(c.capacity, 2);
      c.map_bytes = sizeof(RingHeader) + c.capacity * c.slot_bytes;
      void* p = mmap(nullptr, c.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return std::string("mmap: ") + std::strerror(errno);
      c.ring = new (p) RingHeader();
      c.slots = static_cast<char*>(p) + sizeof(RingHeader);
      if (c.o.eventfd && (c.efd = eventfd(0, EFD_CLOEXEC)) < 0) return std::string("eventfd: ") + std::strerror(errno);
      break;
    }
  }
  return "";
}

void Close(Channel& c) {
  for (int* fd : {&c.data[0], &c.data[1], &c.ctl[0], &c.ctl[1], &c.ack[0], &c.ack[1], &c.udp_rx, &c.udp_tx, &c.efd})
    if (*fd >= 0) close(*fd), *fd = -1;
  if (c.ring) c.ring->~RingHeader(), munmap(c.ring, c.map_bytes), c.ring = nullptr;
}

// ---------------------------------------------------------------- sender (parent)

namespace {

bool Send(Channel& c, const char* msg) {
  const size_t n = static_cast<size_t>(c.o.size);
  switch (c.o.kind) {
    case Kind::kPipe:
    case Kind::kUnix:
      return WriteFull(c.data[1], msg, n);
    case Kind::kUdp: {
      int fd = c.o.new_socket ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : c.udp_tx;
      if (fd < 0) return false;
      ssize_t w = sendto(fd, msg, n, 0, reinterpret_cast<const sockaddr*>(&c.udp_addr), sizeof c.udp_addr);
      if (c.o.new_socket) close(fd);
      return w == static_cast<ssize_t>(n);
    }
    case Kind::kShm: {
      RingHeader& r = *c.ring;
      const uint64_t head = r.head.load(std::memory_order_relaxed);
      int polls = 0;
      while (head - r.tail.load(std::memory_order_acquire) >= c.capacity) Relax(polls);  // full
      std::memcpy(c.slots + (head & (c.capacity - 1)) * c.slot_bytes, msg, n);
      r.head.store(head + 1, std::memory_order_release);
      if (c.o.eventfd) {
        uint64_t one = 1;
        return write(c.efd, &one, sizeof one) == sizeof one;
      }
      return true;
    }
  }
  return false;
}

// Reads the next cumulative count from the ack pipe; false on timeout (a lost datagram) or EOF.
bool ReadAck(Channel& c, int64_t* count) {
  pollfd p{c.ack[0], POLLIN, 0};
  if (poll(&p, 1, kCreditTimeoutMs) != 1) return false;
  return ReadFull(c.ack[0], count, sizeof *count);
}

}  // namespace

// Sends `n` messages and waits for the final ack; "" or what went wrong.
std::string SendBatch(Channel& c, int64_t n, std::vector<char>& msg, uint64_t& seq) {
  if (!WriteFull(c.ctl[1], &n, sizeof n)) return "the receiver is gone";
  int64_t acked = 0;
  for (int64_t i = 0; i < n; ++i) {
    while (c.window > 0 && i - acked >= c.window)
      if (!ReadAck(c, &acked)) return "no credit from the receiver in 5 s (a datagram was lost?)";
    Stamp(msg.data(), c.o.size, seq++);
    if (!Send(c, msg.data())) return std::string("send failed: ") + std::strerror(errno);
  }
  while (acked < n)
    if (!ReadAck(c, &acked)) return "the receiver did not acknowledge the batch";
  if (acked != n) return "the receiver saw a lost, short or out-of-order message";
  return "";
}

std::string AskCounts(Channel& c) {
  const int64_t ask = -1;
  int64_t answer = -1;
  if (!WriteFull(c.ctl[1], &ask, sizeof ask)) return "the receiver is gone";
  if (!ReadAck(c, &answer) || answer != 0) return "the receiver did not report its switch counts";
  return "";
}

// ---------------------------------------------------------------- receiver (child)

namespace {

bool Recv(Channel& c, char* buf) {
  const size_t n = static_cast<size_t>(c.o.size);
  switch (c.o.kind) {
    case Kind::kPipe:
      return ReadFull(c.data[0], buf, n);
    case Kind::kUnix:
      return ReadFull(c.data[0], buf, n);
    case Kind::kUdp: {
      ssize_t r;
      while ((r = recv(c.udp_rx, buf, 65536, 0)) < 0 && errno == EINTR) {
      }
      return r == static_cast<ssize_t>(n);
    }
    case Kind::kShm: {
      RingHeader& r = *c.ring;
      const uint64_t tail = r.tail.load(std::memory_order_relaxed);
      int polls = 0;
      while (r.head.load(std::memory_order_acquire) == tail) {  // empty
        if (c.o.eventfd) {
          uint64_t v;
          if (read(c.efd, &v, sizeof v) < 0 && errno != EINTR) return false;
        } else {
          Relax(polls);
        }
      }
      std::memcpy(buf, c.slots + (tail & (c.capacity - 1)) * c.slot_bytes, n);
      r.tail.store(tail + 1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

}  // namespace

[[noreturn]] void ReceiverMain(Channel& c, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  std::vector<char> buf(std::max<int64_t>(c.o.size, 65536));
  uint64_t seq = 0;
  const int64_t credit_every = c.window > 0 ? std::max<int64_t>(1, c.window / 2) : 0;
  struct rusage before {}, after {};
  getrusage(RUSAGE_SELF, &before);
  int64_t n = 0;
  while (ReadFull(c.ctl[0], &n, sizeof n) && n != 0) {
    if (n < 0) {  // the parent asks for the switch counts so far, between its timed batches
      getrusage(RUSAGE_SELF, &after);
      c.ring->child_voluntary = after.ru_nvcsw - before.ru_nvcsw;
      c.ring->child_involuntary = after.ru_nivcsw - before.ru_nivcsw;
      const int64_t reported = 0;
      WriteFull(c.ack[1], &reported, sizeof reported);
      continue;
    }
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
      ok = ok && Recv(c, buf.data()) && StampOk(buf.data(), c.o.size, seq);
      ++seq;
      if (!ok) break;
      if (credit_every && (i + 1) % credit_every == 0 && i + 1 < n) {
        int64_t got = i + 1;
        WriteFull(c.ack[1], &got, sizeof got);
      }
    }
    int64_t final_ack = ok ? n : -1;
    WriteFull(c.ack[1], &final_ack, sizeof final_ack);
    if (!ok) _exit(1);
  }
  _exit(0);
}

}  // namespace ipc
}  // namespace ctxbench
