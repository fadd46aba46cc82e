#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "storage.h"

namespace ctxbench {
namespace {

// Wall-clock second this process started (static initialisation, before main).
const time_t kProcessStart = time(nullptr);

}  // namespace

void RemoveStaleScratch(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> stale;
  const size_t prefix_len = std::strlen(kScratchPrefix);
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, kScratchPrefix, prefix_len) != 0) continue;
    struct stat st {};
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode) && st.st_uid == geteuid() && st.st_mtime < kProcessStart) stale.push_back(e->d_name);
  }
  closedir(d);
  for (const std::string& name : stale) {
    std::string path = dir + "/" + name;
    int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (DIR* sub = fdopendir(fd)) {
      while (dirent* e = readdir(sub)) {
        struct stat st {};
        if (fstatat(dirfd(sub), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
          unlinkat(dirfd(sub), e->d_name, 0);
      }
      closedir(sub);
    } else {
      close(fd);
    }
    rmdir(path.c_str());
  }
}

int OpenScratchFile(const std::string& dir, std::string* why) {
  std::string tmpl = dir + "/" + kScratchPrefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    *why = "cannot create a directory in " + dir + ": " + std::strerror(errno);
    return -1;
  }
  std::string sub(buf.data());
  std::string file = sub + "/data";
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int err = errno;
  if (fd >= 0) unlink(file.c_str());  // from here on the data lives only behind fd
  rmdir(sub.c_str());
  if (fd < 0) *why = "cannot create a file in " + dir + ": " + std::strerror(err);
  return fd;
}

int64_t FreeBytes(const std::string& dir) {
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0) return -1;
  return static_cast<int64_t>(vfs.f_bavail) * static_cast<int64_t>(vfs.f_frsize);
}

}  // namespace ctxbench
