// ipc.* — delivering a message of `size` bytes from one process to another on the same host.
//
// All four stream ONE-WAY messages: the parent (sender) sends a batch of N messages to a forked child
// (receiver, PR_SET_PDEATHSIG, reaped on every path), which receives each whole message, checks its
// sequence number, and answers the batch with one final ack; the parent's clock runs from the first
// send to that ack (UseManualTime). One op is one message delivered; the figure is ns per message
// (throughput, not round-trip latency), counter mb_per_s = size / ns. In-flight messages are bounded:
// by the kernel buffer (pipe, unix_socket: the writer blocks), by the ring (shm_queue), and by credits
// for UDP (the receiver returns a credit every window/2 datagrams; window = receive buffer / (2 x
// datagram truesize), at most 256) so no datagram is dropped. Switches are counted in both processes.
//   ipc.pipe:        write() / read() of size bytes on a pipe.
//   ipc.unix_socket: send() / recv() on a SOCK_STREAM socketpair(AF_UNIX).
//   ipc.udp_loopback: sendto() to 127.0.0.1 / recv() of one datagram; `socket` reused: one socket for
//     all messages; new: socket() + sendto() + close() per message (seed 004's "每次初始化一个socket").
//   ipc.shm_queue: a single-producer single-consumer lock-free ring in a MAP_SHARED mapping made before
//     fork; the message is copied into a slot and out of it. `notify` spin: both sides poll (pause,
//     sched_yield after 100 empty polls); eventfd: the producer write()s an eventfd after every message
//     and the consumer blocks in read() on it when the ring is empty (seed 004's pipe-byte wake-up).
// Seed 004 (Intel Xeon 2.13GHz): 512 B UDP on one host 451723.21/s with one socket, 203013.37/s with
// a new socket per message; a shared-memory lock-free queue "about 1.6M/s" (an estimate from its
// 812.32 MB/s memory write speed for 512 B, not a measurement).
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
namespace {

using Clock = std::chrono::steady_clock;

enum class Kind { kPipe, kUnix, kUdp, kShm };

constexpr int64_t kRingBytes = 1 << 20;  // shm_queue ring: at most 1 MiB of slots
constexpr int kCreditTimeoutMs = 5000;

struct alignas(64) RingHeader {
  alignas(64) std::atomic<uint64_t> head{0};  // next slot the producer fills
  alignas(64) std::atomic<uint64_t> tail{0};  // next slot the consumer empties
  alignas(64) int64_t child_voluntary = 0;
  int64_t child_involuntary = 0;
};

struct Options {
  Kind kind;
  int64_t size = 512;
  bool new_socket = false;  // udp
  bool eventfd = false;     // shm
};

// Channel state, set up before fork; each side closes what it does not use.
struct Channel {
  Options o;
  int data[2] = {-1, -1};  // pipe: [0] read, [1] write; unix: [0] child's end, [1] parent's end
  int udp_rx = -1, udp_tx = -1;
  sockaddr_in udp_addr{};
  int64_t window = 0;  // udp credits; 0 = unbounded (the kernel bounds it)
  int efd = -1;
  RingHeader* ring = nullptr;
  char* slots = nullptr;
  uint64_t capacity = 0, slot_bytes = 0;
  size_t map_bytes = 0;
  int ctl[2] = {-1, -1};  // parent -> child: batch sizes
  int ack[2] = {-1, -1};  // child -> parent: credits and the final ack (cumulative counts)
};

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

// ---------------------------------------------------------------- receiver (child)

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

[[noreturn]] void ReceiverMain(Channel& c, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  std::vector<char> buf(std::max<int64_t>(c.o.size, 65536));
  uint64_t seq = 0;
  const int64_t credit_every = c.window > 0 ? std::max<int64_t>(1, c.window / 2) : 0;
  struct rusage before {}, after {};
  getrusage(RUSAGE_SELF, &before);
  int64_t n = 0;
  while (ReadFull(c.ctl[0], &n, sizeof n) && n > 0) {
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
  getrusage(RUSAGE_SELF, &after);
  if (c.ring) {
    c.ring->child_voluntary = after.ru_nvcsw - before.ru_nvcsw;
    c.ring->child_involuntary = after.ru_nivcsw - before.ru_nivcsw;
  }
  _exit(0);
}

// ---------------------------------------------------------------- the benchmark

void IpcBody(benchmark::State& state, const Options& o, const char* id) {
  auto fail = [&](const std::string& why) { state.SkipWithError((std::string(id) + ": " + why).c_str()); };
  Channel c;
  c.o = o;
  // Switch counts of the child come back through a shared page for every kind.
  void* stats = mmap(nullptr, sizeof(RingHeader), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (stats == MAP_FAILED) return fail("mmap failed");
  auto* child_stats = new (stats) RingHeader();
  std::string error = Open(c);
  if (!error.empty()) {
    Close(c);
    munmap(stats, sizeof(RingHeader));
    return state.SkipWithError(("unsupported: " + error).c_str());
  }
  const pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    if (!c.ring) c.ring = child_stats;  // the receiver reports its switches here
    ReceiverMain(c, parent);
  }
  if (child < 0) error = std::string("fork failed: ") + std::strerror(errno);
  // The parent keeps only its ends.
  for (int* fd : {&c.ctl[0], &c.ack[1], &c.udp_rx})
    if (*fd >= 0) close(*fd), *fd = -1;
  if (o.kind == Kind::kPipe && c.data[0] >= 0) close(c.data[0]), c.data[0] = -1;
  if (o.kind == Kind::kUnix && c.data[0] >= 0) close(c.data[0]), c.data[0] = -1;

  std::vector<char> msg(static_cast<size_t>(o.size), 'm');
  uint64_t seq = 0;
  SwitchCounts mine;
  int64_t messages = 0;
  double seconds = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    if (!error.empty()) continue;
    const int64_t n = state.max_iterations;
    SwitchCounts before = SwitchesNow(RUSAGE_SELF);
    auto t0 = Clock::now();
    error = SendBatch(c, n, msg, seq);
    auto t1 = Clock::now();
    mine = SwitchesNow(RUSAGE_SELF) - before;
    messages = n;
    seconds = std::chrono::duration<double>(t1 - t0).count();
    state.SetIterationTime(seconds);
  }
  // Stop and reap the receiver on every path: a batch of 0 ends it.
  int64_t zero = 0;
  if (c.ctl[1] >= 0 && error.empty()) WriteFull(c.ctl[1], &zero, sizeof zero);
  if (child > 0) {
    if (!error.empty()) kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) error = "the receiver failed";
  }
  const RingHeader* cs = c.ring ? c.ring : child_stats;
  const int64_t child_vol = cs->child_voluntary, child_invol = cs->child_involuntary;
  const int64_t window = c.window;
  Close(c);
  child_stats->~RingHeader();
  munmap(stats, sizeof(RingHeader));
  if (!error.empty()) return fail(error);
  // The child's switches are over all its batches; this process's over the last one. Per op both are
  // rates, so report the child's over all messages it got and ours over the last batch.
  const double total = static_cast<double>(seq);
  const double ops = static_cast<double>(messages);
  state.counters["voluntary_ctxsw_per_op"] = static_cast<double>(mine.voluntary) / ops + static_cast<double>(child_vol) / total;
  state.counters["involuntary_ctxsw_per_op"] =
      static_cast<double>(mine.involuntary) / ops + static_cast<double>(child_invol) / total;
  state.counters["mb_per_s"] = seconds > 0 ? static_cast<double>(o.size) * ops / seconds / 1e6 : 0.0;
  if (o.kind == Kind::kUdp) state.counters["window"] = static_cast<double>(window);
}

ParamSpec SizeParam(int64_t max) {
  return IntParam("size", 512, 1, max, {8, 64, 512, 4096, std::min<int64_t>(65507, max)},
                  "message bytes (seed 004: 512)");
}

Options ReadOptions(const Params& params, Kind kind) {
  Options o;
  o.kind = kind;
  o.size = GetInt(params, "size");
  if (kind == Kind::kUdp) o.new_socket = GetString(params, "socket") == "new";
  if (kind == Kind::kShm) o.eventfd = GetString(params, "notify") == "eventfd";
  return o;
}

constexpr const char* kSeed004Machine = "Intel Xeon 2.13GHz, 64 GB, Linux (version not given), about 2014";
constexpr const char* kCommon =
    " One op is one message delivered one way; the parent streams a batch and the receiver acks it once, so the "
    "figure is ns per message at full throughput (mb_per_s = size / ns), with bounded in-flight messages; the "
    "receiver checks every message's sequence number.";

Kernel MakeIpcKernel(const char* id, const char* title, Kind kind, const std::string& how,
                     std::vector<ParamSpec> extra, int64_t max_size, std::optional<SeedReference> seed) {
  Kernel k;
  k.spec.id = id;
  k.spec.title = title;
  k.spec.family = "ipc";
  k.spec.unit = "ns/op";
  k.spec.description = how + kCommon;
  k.spec.params = {SizeParam(max_size)};
  for (auto& p : extra) k.spec.params.push_back(std::move(p));
  k.spec.seed_reference = std::move(seed);
  k.body = [kind, id](benchmark::State& s, const Params& p) { IpcBody(s, ReadOptions(p, kind), id); };
  k.manual_time = true;
  return k;
}

KernelRegistrar pipe_kernel(MakeIpcKernel(
    "ipc.pipe", "Pipe: one-way messages between two processes", Kind::kPipe,
    "A parent writes size-byte messages into a pipe and a forked child read()s each whole message.", {}, 1 << 20,
    std::nullopt));

KernelRegistrar unix_kernel(MakeIpcKernel(
    "ipc.unix_socket", "Unix domain socket: one-way messages between two processes", Kind::kUnix,
    "A parent writes size-byte messages into a SOCK_STREAM socketpair(AF_UNIX) and a forked child reads each "
    "whole message.",
    {}, 1 << 20, std::nullopt));

KernelRegistrar udp_kernel(MakeIpcKernel(
    "ipc.udp_loopback", "UDP over loopback: one-way datagrams between two processes", Kind::kUdp,
    "A parent sendto()s size-byte datagrams to a forked child's socket on 127.0.0.1, from one socket (reused) or "
    "a new socket per datagram (socket + sendto + close); credits keep the datagrams in flight inside the "
    "receive buffer so none is dropped.",
    {ChoiceParam("socket", "reused", {"reused", "new"},
                 "reused: one sending socket; new: socket() + sendto() + close() per message")},
    65507,
    Seed("004", PerOpNs(451723.21), kSeed004Machine, {{"size", "512"}, {"socket", "reused"}},
         "451723.21 512-byte datagrams per second received on the same host with one socket (203013.37/s "
         "with a new socket per datagram), converted as 1e9 / rate")));

KernelRegistrar shm_kernel(MakeIpcKernel(
    "ipc.shm_queue", "Shared-memory SPSC ring: one-way messages between two processes", Kind::kShm,
    "A parent copies size-byte messages into a single-producer single-consumer lock-free ring in memory shared "
    "with a forked child (mmap MAP_SHARED before fork), which copies each out; notify spin polls, eventfd writes "
    "an eventfd per message and the consumer sleeps in read() on it when the ring is empty.",
    {ChoiceParam("notify", "spin", {"spin", "eventfd"},
                 "spin: both sides poll (pause, sched_yield after 100 polls); eventfd: wake the consumer with an "
                 "eventfd write per message")},
    1 << 20,
    Seed("004", PerOpNs(1.6e6), kSeed004Machine, {{"size", "512"}, {"notify", "spin"}},
         "\"a capacity of roughly 1.6 million messages/s\" (translated): 512-byte messages, estimated by "
         "the author from 812.32 MB/s sequential memory writes, not measured; converted as 1e9 / rate")));

}  // namespace
}  // namespace ctxbench
