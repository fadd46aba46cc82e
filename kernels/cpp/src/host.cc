#include "host.h"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>

namespace ctxbench {

namespace {

cpu_set_t InitialMask() {
  static cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0) CPU_SET(0, &m);
    return m;
  }();
  return mask;
}

// Sibling hardware threads of `cpu` (its own core), from sysfs; empty when unknown.
std::set<int> CoreSiblings(int cpu) {
  std::set<int> out;
  std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
  std::string list;
  if (!(f >> list)) return out;
  size_t pos = 0;
  while (pos < list.size()) {  // "0-1,4,6-7"
    size_t comma = list.find(',', pos);
    std::string part = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    try {
      int lo = std::stoi(part.substr(0, dash));
      int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi; ++c) out.insert(c);
    } catch (...) {
      return {};
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<int> AllowedCpus() {
  cpu_set_t mask = InitialMask();
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  return cpus;
}

std::string ChoosePlacement(const std::string& name, Placement* out) {
  out->name = name;
  std::vector<int> cpus = AllowedCpus();
  if (name == "unpinned") return "";
  if (cpus.empty()) return "no CPU in this process's affinity mask";
  if (name == "same_core") {
    out->cpu_a = out->cpu_b = cpus[0];
    return "";
  }
  if (name == "cross_core") {
    if (cpus.size() < 2)
      return "placement cross_core needs 2 allowed CPUs, this process may run on only CPU " +
             std::to_string(cpus[0]);
    out->cpu_a = cpus[0];
    std::set<int> siblings = CoreSiblings(cpus[0]);
    for (size_t i = 1; i < cpus.size(); ++i) {
      if (!siblings.count(cpus[i])) {  // prefer a different physical core
        out->cpu_b = cpus[i];
        return "";
      }
    }
    out->cpu_b = cpus[1];
    out->smt_siblings = true;
    return "";
  }
  return "unknown placement " + name;
}

bool PinSelfTo(int cpu) {
  if (cpu < 0) {
    RestoreAffinity();
    return true;
  }
  cpu_set_t m;
  CPU_ZERO(&m);
  CPU_SET(cpu, &m);
  return sched_setaffinity(0, sizeof m, &m) == 0;
}

void RestoreAffinity() {
  cpu_set_t m = InitialMask();
  sched_setaffinity(0, sizeof m, &m);
}

SwitchCounts SwitchesNow(int who) {
  struct rusage ru {};
  getrusage(who, &ru);
  return {ru.ru_nvcsw, ru.ru_nivcsw};
}

namespace {

// All n bytes through kIo (read or write, called directly): retried after EINTR and short transfers.
template <auto kIo, typename Char>
bool TransferFull(int fd, Char* p, size_t n) {
  while (n > 0) {
    ssize_t done = kIo(fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= static_cast<size_t>(done);
  }
  return true;
}

}  // namespace

bool WriteFull(int fd, const void* buf, size_t n) {
  return TransferFull<write>(fd, static_cast<const char*>(buf), n);
}

bool ReadFull(int fd, void* buf, size_t n) { return TransferFull<read>(fd, static_cast<char*>(buf), n); }

}  // namespace ctxbench
