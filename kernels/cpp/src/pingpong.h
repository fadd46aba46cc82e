// Channels for the ctxswitch.* ping-pong: a token passed between a main task and its partner (a forked
// process or a thread). Each transport offers MainSend/MainRecv for the main side and
// PartnerRecv/PartnerSend for the partner; every call returns false when the other side is gone.
#pragma once

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <functional>

#include "host.h"

namespace ctxbench {

// Lives in a MAP_SHARED page so a forked partner and the main task see the same memory.
struct Shared {
  std::atomic<uint32_t> turn{1};  // futex word: 1 = partner's turn, 0 = main's turn
  std::atomic<uint32_t> abort{0};  // main gave up: the partner must return
  // Written by the partner before it returns; read by main after waitpid / pthread_join.
  int32_t partner_ok = 0;          // pinned, right policy, every round trip done
  int32_t partner_setup_ok = 0;    // pinned and right policy (set before the ready token)
  int64_t partner_voluntary = 0;
  int64_t partner_involuntary = 0;
  int64_t partner_syscalls = 0;
};

struct PipeTransport {
  int to_partner[2] = {-1, -1};
  int to_main[2] = {-1, -1};

  bool Open(Shared*, bool) { return pipe2(to_partner, O_CLOEXEC) == 0 && pipe2(to_main, O_CLOEXEC) == 0; }
  void CloseAll() {
    for (int* fd : {&to_partner[0], &to_partner[1], &to_main[0], &to_main[1]})
      if (*fd >= 0) close(*fd), *fd = -1;
  }
  // After fork: each process keeps only its own ends.
  void KeepMainEnds() {
    close(to_partner[0]), to_partner[0] = -1;
    close(to_main[1]), to_main[1] = -1;
  }
  void KeepPartnerEnds() {
    close(to_partner[1]), to_partner[1] = -1;
    close(to_main[0]), to_main[0] = -1;
  }
  // Main gives up: closing its ends makes the partner's read return EOF.
  void Abort() {
    if (to_partner[1] >= 0) close(to_partner[1]), to_partner[1] = -1;
  }
  bool MainSend(int64_t&) { return WriteFull(to_partner[1], &token_, 1); }
  bool MainRecv(int64_t&, const std::function<bool()>&) { return ReadFull(to_main[0], &token_, 1); }
  bool PartnerRecv(int64_t&) { return ReadFull(to_partner[0], &ptoken_, 1); }
  bool PartnerSend(int64_t&) { return WriteFull(to_main[1], &ptoken_, 1); }
  static constexpr int kFixedSyscallsPerSwitch = 2;

 private:
  char token_ = 't', ptoken_ = 't';
};

inline long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const struct timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}

struct FutexTransport {
  Shared* shared = nullptr;
  int wait_op = FUTEX_WAIT, wake_op = FUTEX_WAKE;

  bool Open(Shared* s, bool private_futex) {
    shared = s;
    if (private_futex) wait_op = FUTEX_WAIT_PRIVATE, wake_op = FUTEX_WAKE_PRIVATE;
    return true;
  }
  void CloseAll() {}
  void KeepMainEnds() {}
  void KeepPartnerEnds() {}
  // Main gives up: the partner sees the abort flag as soon as its wait returns.
  void Abort() {
    shared->abort.store(1);
    shared->turn.store(1);
    Futex(&shared->turn, wake_op, 1, nullptr);
  }
  bool MainSend(int64_t& syscalls) { return Flip(1, syscalls); }
  // Waits until the partner hands the turn back; every 200 ms asks `alive` whether it still can.
  bool MainRecv(int64_t& syscalls, const std::function<bool()>& alive) {
    const struct timespec tick = {0, 200 * 1000 * 1000};
    while (shared->turn.load(std::memory_order_acquire) != 0) {
      ++syscalls;
      if (Futex(&shared->turn, wait_op, 1, &tick) != 0 && errno == ETIMEDOUT && !alive()) return false;
    }
    return true;
  }
  bool PartnerRecv(int64_t& syscalls) {
    while (shared->turn.load(std::memory_order_acquire) != 1) {
      if (shared->abort.load()) return false;
      ++syscalls;
      Futex(&shared->turn, wait_op, 0, nullptr);
    }
    return !shared->abort.load();
  }
  bool PartnerSend(int64_t& syscalls) { return Flip(0, syscalls); }
  static constexpr int kFixedSyscallsPerSwitch = 0;  // counted as they happen

 private:
  bool Flip(uint32_t to, int64_t& syscalls) {
    shared->turn.store(to, std::memory_order_release);
    ++syscalls;
    return Futex(&shared->turn, wake_op, 1, nullptr) >= 0;
  }
};

}  // namespace ctxbench
