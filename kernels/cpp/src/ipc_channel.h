// ipc.*'s channels (ipc.cc): the four ways of moving a message between a parent and a forked child,
// set up before fork, with the sender's batch and the receiver's loop. One op of an ipc kernel is one
// Send in SendBatch and one Recv in ReceiverMain.
#pragma once

#include <netinet/in.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace ctxbench {
namespace ipc {

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

// Makes the channel's pipes, sockets or ring; "" or why this host cannot (exit 3).
std::string Open(Channel& c);
void Close(Channel& c);

// Sends `n` messages and waits for the final ack; "" or what went wrong.
std::string SendBatch(Channel& c, int64_t n, std::vector<char>& msg, uint64_t& seq);

// Asks the receiver for its switch counts so far (written to the ring header its side reports in,
// outside any timing) and waits for them; "" or what went wrong.
std::string AskCounts(Channel& c);

// The child: receives and checks batches (a batch of -1: its switch counts are asked for) until a batch
// of 0 or the parent closes the control pipe, then exits.
[[noreturn]] void ReceiverMain(Channel& c, pid_t parent);

}  // namespace ipc
}  // namespace ctxbench
