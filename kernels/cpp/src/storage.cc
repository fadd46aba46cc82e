// storage.* — what one read() or write() of B bytes costs against a file in memory (tmpfs) or on disk.
//
// storage.write / storage.read: one op is one write()/read() call of `block_size` bytes (8 B .. 1 MiB)
// on a private scratch file of `file_mb` MiB (storage.h: created in a ctxbench-storage-XXXXXX directory
// under the target and unlinked at once). `pattern` seq: write()/read() advancing the file offset, an
// lseek back to 0 after each pass over the file; rand: pwrite()/pread() at the offsets of a shuffled
// list of all blocks, each block once per pass. `target` memory: /dev/shm (tmpfs); disk: `dir`, default
// the current working directory (the agent's work dir). `cache` buffered: through the page cache;
// direct: O_DIRECT (aligned buffer, block_size a multiple of 512 and of the device's alignment, exit 3
// where the filesystem refuses it). Writes never fsync: a buffered write ends in the page cache, as in
// seed 004. Reads: `state` warm reads a file the page cache holds; cold drops it before each pass with
// posix_fadvise(POSIX_FADV_DONTNEED) (after fdatasync, outside the timing), as seed 004 did. The file is
// filled before timing, so writes overwrite allocated blocks. 1 syscall per op; the figure is MB/s
// (10^6 bytes/s), ns per call is the counter ns_per_op.
//
// Seed 004 (Intel Xeon 2.13GHz, 400 MB written per test, one process): tmpfs ("内存") seq/rand write
// 4 KiB 1643.37 / 1428.54, 512 B 812.32 / 493.95, 128 B 812.32 / 175.23, 8 B 23.63 / 13.23 M/s; disk
// seq write buffered 4 KiB 347.67, 512 B 151.47, 128 B 86.19; O_DIRECT 4 KiB 44.42, 512 B 26.36, 128 B
// 46.61 (O_DIRECT of 128 B cannot work on Linux; it was probably buffered); rand O_DIRECT 4 KiB 3.57;
// disk reads 4 KiB seq cold 45.24, warm 3605.59, rand cold 1.04, warm 43.83 M/s.
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "registry.h"
#include "storage.h"

namespace ctxbench {
namespace {

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kDirectAlign = 512;         // the least O_DIRECT alignment any Linux device needs
constexpr int64_t kMaxShuffled = 1 << 22;     // blocks listed and shuffled; beyond, a scrambled stride

struct Config {
  bool write = false;
  bool rand = false;
  bool direct = false;
  bool cold = false;
  int64_t block = 0;
  int64_t file_bytes = 0;
  std::string dir;  // resolved target directory
};

std::string TargetDir(const Params& params) {
  if (GetString(params, "target") == "memory") return "/dev/shm";
  const std::string& dir = GetString(params, "dir");
  if (!dir.empty()) return dir;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string(".");
}

Config ReadConfig(const Params& params, bool write) {
  Config c;
  c.write = write;
  c.rand = GetString(params, "pattern") == "rand";
  c.direct = GetString(params, "cache") == "direct";
  c.cold = !write && GetString(params, "state") == "cold";
  c.block = GetInt(params, "block_size");
  c.file_bytes = GetInt(params, "file_mb") * kMiB;
  c.dir = TargetDir(params);
  return c;
}

bool IsTmpfs(const std::string& dir) {
  struct statfs fs {};
  return statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

// Parameter combinations that cannot mean anything, and a `dir` that is not a usable directory: exit 2.
std::string Invalid(const Params& params, bool write) {
  Config c = ReadConfig(params, write);
  const std::string& dir_param = GetString(params, "dir");
  if (!dir_param.empty() && GetString(params, "target") == "memory")
    return "parameter dir applies to target=disk only (target=memory is /dev/shm)";
  if (c.direct && c.block % kDirectAlign != 0)
    return "cache=direct needs block_size to be a multiple of 512 (O_DIRECT transfers whole device blocks), got " +
           std::to_string(c.block);
  if (c.cold && GetString(params, "target") == "memory")
    return "state=cold needs target=disk: tmpfs pages are the file itself, there is no cache to drop";
  if (GetString(params, "target") == "memory") return "";  // /dev/shm missing is the host's lack: exit 3
  struct stat st {};
  if (stat(c.dir.c_str(), &st) != 0) return "dir '" + c.dir + "' does not exist";
  if (!S_ISDIR(st.st_mode)) return "dir '" + c.dir + "' is not a directory";
  if (access(c.dir.c_str(), W_OK | X_OK) != 0) return "dir '" + c.dir + "' is not writable";
  return "";
}

// Opens the scratch file, O_DIRECT-capable when asked; "" or why this host cannot (exit 3).
int OpenFor(const Config& c, std::string* why) {
  int fd = OpenScratchFile(c.dir, why);
  if (fd < 0) return -1;
  if (c.direct && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_DIRECT) != 0) {
    *why = "the filesystem of " + c.dir + " refuses O_DIRECT (" + std::strerror(errno) + ")";
    close(fd);
    return -1;
  }
  return fd;
}

std::string Unsupported(const Params& params, bool write) {
  Config c = ReadConfig(params, write);
  struct stat st {};
  if (stat(c.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return c.dir + " is not available on this host";
  RemoveStaleScratch(c.dir);
  if (c.direct && IsTmpfs(c.dir))
    return c.dir + " is tmpfs: its pages are the storage, there is no cache for O_DIRECT to bypass";
  const int64_t free_bytes = FreeBytes(c.dir);
  if (free_bytes >= 0 && free_bytes < 2 * c.file_bytes)
    return "only " + std::to_string(free_bytes / kMiB) + " MiB free in " + c.dir + ", file_mb=" +
           std::to_string(c.file_bytes / kMiB) + " needs twice that";
  std::string why;
  int fd = OpenFor(c, &why);
  if (fd < 0) return why;
  if (c.direct) {  // one aligned block: refused when block_size is not a multiple of the device's block
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, static_cast<size_t>(c.block)) != 0) return "cannot allocate an aligned buffer";
    std::memset(buf, 0x5a, static_cast<size_t>(c.block));
    ssize_t w = pwrite(fd, buf, static_cast<size_t>(c.block), 0);
    int err = errno;
    std::free(buf);
    if (w != c.block) {
      close(fd);
      return "O_DIRECT write of block_size=" + std::to_string(c.block) + " refused in " + c.dir + " (" +
             std::strerror(err) + "): not a multiple of the device's logical block size?";
    }
  }
  close(fd);
  return "";
}

// The byte at file offset `off`, so reads can check what they got.
inline unsigned char Pattern(int64_t off) { return static_cast<unsigned char>((off * 131 + 7) >> 3); }

// Every block once per pass, in a scrambled order: a shuffled list when it fits in 16 MiB, else the
// stride permutation i * P mod n with P coprime to n near 0.618 n.
class Offsets {
 public:
  Offsets(int64_t blocks, bool rand) : n_(blocks), rand_(rand) {
    if (!rand) return;
    if (n_ <= kMaxShuffled) {
      list_.resize(static_cast<size_t>(n_));
      std::iota(list_.begin(), list_.end(), 0u);
      std::shuffle(list_.begin(), list_.end(), std::mt19937_64(4));
    } else {
      stride_ = static_cast<int64_t>(0.6180339887 * static_cast<double>(n_)) | 1;
      while (std::gcd(stride_, n_) != 1) stride_ += 2;
    }
  }
  int64_t Block(int64_t i) const {
    if (!rand_) return i;
    if (!list_.empty()) return list_[static_cast<size_t>(i)];
    return static_cast<int64_t>((static_cast<unsigned __int128>(i) * static_cast<uint64_t>(stride_)) %
                                static_cast<uint64_t>(n_));
  }

 private:
  int64_t n_;
  bool rand_;
  int64_t stride_ = 1;
  std::vector<uint32_t> list_;
};

// One scratch file per process, filled once, shared by every run of the body (warm-up, repetitions).
struct Scratch {
  int fd = -1;
  std::string error;
};

Scratch& FilledScratch(const Config& c) {
  static Scratch s = [&c] {
    Scratch out;
    Config buffered = c;
    buffered.direct = false;
    out.fd = OpenFor(buffered, &out.error);
    if (out.fd < 0) return out;
    std::vector<unsigned char> chunk(static_cast<size_t>(kMiB));
    for (int64_t off = 0; off < c.file_bytes && out.error.empty(); off += kMiB) {
      for (int64_t i = 0; i < kMiB; ++i) chunk[static_cast<size_t>(i)] = Pattern(off + i);
      if (pwrite(out.fd, chunk.data(), chunk.size(), off) != kMiB)
        out.error = std::string("cannot fill the scratch file: ") + std::strerror(errno);
    }
    if (out.error.empty() && fdatasync(out.fd) != 0)
      out.error = std::string("fdatasync of the scratch file failed: ") + std::strerror(errno);
    if (out.error.empty() && c.direct && fcntl(out.fd, F_SETFL, fcntl(out.fd, F_GETFL) | O_DIRECT) != 0)
      out.error = std::string("O_DIRECT refused: ") + std::strerror(errno);
    return out;
  }();
  return s;
}

void StorageBody(benchmark::State& state, const Params& params, bool write) {
  const Config c = ReadConfig(params, write);
  const char* id = write ? "storage.write" : "storage.read";
  Scratch& scratch = FilledScratch(c);
  if (!scratch.error.empty()) return state.SkipWithError((std::string(id) + ": " + scratch.error).c_str());
  const int fd = scratch.fd;
  const int64_t blocks = c.file_bytes / c.block;
  const Offsets offsets(blocks, c.rand);
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, static_cast<size_t>(c.block)) != 0) return state.SkipWithError("posix_memalign failed");
  std::unique_ptr<unsigned char, decltype(&std::free)> buf(static_cast<unsigned char*>(raw), &std::free);
  for (int64_t i = 0; i < c.block; ++i) buf.get()[i] = Pattern(i);

  const size_t len = static_cast<size_t>(c.block);
  int64_t pos = blocks;  // the first op starts a pass
  int64_t passes = 0, bad = 0, short_ops = 0;
  for (auto _ : state) {
    if (pos == blocks) {
      pos = 0;
      ++passes;
      if (c.cold) {
        state.PauseTiming();
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        state.ResumeTiming();
      }
      if (!c.rand && lseek(fd, 0, SEEK_SET) != 0) ++short_ops;
    }
    const int64_t off = offsets.Block(pos) * c.block;
    ssize_t n;
    if (write) n = c.rand ? pwrite(fd, buf.get(), len, off) : ::write(fd, buf.get(), len);
    else {
      n = c.rand ? pread(fd, buf.get(), len, off) : ::read(fd, buf.get(), len);
      bad += buf.get()[0] != Pattern(off);  // the data is the file's, at the right offset
    }
    short_ops += n != c.block;
    ++pos;
  }
  if (short_ops) return state.SkipWithError((std::string(id) + ": " + std::to_string(short_ops) + " calls moved fewer than block_size bytes").c_str());
  if (bad) return state.SkipWithError((std::string(id) + ": read data that is not the file's at that offset").c_str());
  state.counters["syscalls_per_op"] = 1;
  state.counters["bytes_per_op"] = static_cast<double>(c.block);
  state.counters["passes"] = static_cast<double>(passes);
}

std::vector<ParamSpec> StorageParams(bool write) {
  std::vector<ParamSpec> p = {
      ChoiceParam("pattern", "seq", {"seq", "rand"},
                  "seq: write()/read() advancing the offset; rand: pwrite()/pread() at shuffled block offsets"),
      IntParam("block_size", 4096, 8, 1 << 20, {8, 128, 512, 4096}, "bytes per call (8 B .. 1 MiB)"),
      ChoiceParam("target", "disk", {"disk", "memory"},
                  "disk: a file under dir (default: the working directory); memory: a file in /dev/shm (tmpfs)"),
      StringParam("dir", "", "directory for target=disk; empty: the current working directory"),
      ChoiceParam("cache", "buffered", {"buffered", "direct"},
                  "buffered: through the page cache; direct: O_DIRECT (block_size a multiple of 512)"),
      IntParam("file_mb", 16, 1, 4096, {16, 64, 400, 1024}, "size of the scratch file in MiB (seed 004: 400)"),
  };
  if (!write)
    p.push_back(ChoiceParam("state", "warm", {"warm", "cold"},
                            "warm: the page cache holds the file; cold: posix_fadvise(DONTNEED) before each pass"));
  return p;
}

KernelRegistrar write_kernel({
    .spec =
        {
            .id = "storage.write",
            .title = "write() of B bytes to a file",
            .unit = "MB/s",
            .description =
                "One op is one write() (seq) or pwrite() at a shuffled block offset (rand) of block_size bytes "
                "to a private, already-unlinked scratch file of file_mb MiB on disk (dir) or in /dev/shm; "
                "buffered through the page cache or O_DIRECT. No fsync: a buffered write ends in the page "
                "cache. 1 syscall per op; MB/s = 10^6 bytes/s, ns per call in counter ns_per_op.",
            .params = StorageParams(true),
            .seed_reference =
                Seed("004", 1643.37, kSeed004Machine,
                     {{"pattern", "seq"}, {"block_size", "4096"}, {"target", "memory"}, {"cache", "buffered"},
                      {"file_mb", "400"}},
                     "\"[memory][sequential][write] 4KB 1643.37M/s\" (translated): 400 MB written with "
                     "write() on an O_APPEND file in memory, no fsync; its M may be MiB",
                     "MB/s"),
        },
    .body = [](benchmark::State& s, const Params& p) { StorageBody(s, p, true); },
    .unsupported = [](const Params& p) { return Unsupported(p, true); },
    .invalid = [](const Params& p) { return Invalid(p, true); },
    .bytes_per_op = [](const Params& p) { return static_cast<double>(GetInt(p, "block_size")); },
});

KernelRegistrar read_kernel({
    .spec =
        {
            .id = "storage.read",
            .title = "read() of B bytes from a file",
            .unit = "MB/s",
            .description =
                "One op is one read() (seq) or pread() at a shuffled block offset (rand) of block_size bytes "
                "from a private, already-unlinked scratch file of file_mb MiB; state warm reads what the page "
                "cache holds, cold drops the file from it (fdatasync + posix_fadvise DONTNEED, untimed) before "
                "each pass; cache direct reads with O_DIRECT. Each read's first byte is checked against the "
                "file's pattern. 1 syscall per op; MB/s = 10^6 bytes/s, ns per call in counter ns_per_op.",
            .params = StorageParams(false),
            .seed_reference =
                Seed("004", 3605.59, kSeed004Machine,
                     {{"pattern", "seq"}, {"block_size", "4096"}, {"target", "disk"}, {"cache", "buffered"},
                      {"state", "warm"}, {"file_mb", "400"}},
                     "\"[disk][sequential][read][with kernel cache] 4KB 3605.59M/s\" (translated); cold "
                     "(posix_fadvise) 45.24, rand warm 43.83, rand cold 1.04 M/s; its M may be MiB",
                     "MB/s"),
        },
    .body = [](benchmark::State& s, const Params& p) { StorageBody(s, p, false); },
    .unsupported = [](const Params& p) { return Unsupported(p, false); },
    .invalid = [](const Params& p) { return Invalid(p, false); },
    .bytes_per_op = [](const Params& p) { return static_cast<double>(GetInt(p, "block_size")); },
});

}  // namespace
}  // namespace ctxbench
