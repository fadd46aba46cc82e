// A private scratch file for storage.* (and anything else that must write to a user's disk): created in
// a fresh `ctxbench-storage-XXXXXX` directory under the target directory, then unlinked and the directory
// removed at once, so the data lives only as long as the open descriptor and vanishes with the process,
// even on SIGKILL. Leftovers of a process killed inside that microsecond window are removed at start.
#pragma once

#include <cstdint>
#include <string>

namespace ctxbench {

constexpr const char* kScratchPrefix = "ctxbench-storage-";

// Removes `ctxbench-storage-*` directories in `dir` (and the regular files in them) that this user owns
// and that are older than this process. Best effort; never touches anything else.
void RemoveStaleScratch(const std::string& dir);

// Opens a new, already unlinked file under `dir` (O_RDWR). Returns the descriptor, or -1 with *why set.
int OpenScratchFile(const std::string& dir, std::string* why);

// Bytes free to an unprivileged writer in the filesystem of `dir`, or -1 when unknown.
int64_t FreeBytes(const std::string& dir);

}  // namespace ctxbench
