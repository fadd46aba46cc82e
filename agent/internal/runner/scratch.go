package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ScratchParam is the kernel parameter that names a directory the kernel writes in (storage kernels).
const ScratchParam = "dir"

// errScratch is the one answer for a `dir` outside the scratch roots: it says nothing about whether
// the path exists, is a symlink or is writable, so the API cannot be used to probe the host.
var errScratch = errors.New("dir must be under the agent's scratch directories")

// PrepareScratch creates the scratch roots (0700 when new) and returns them absolute, with symlinks
// resolved, so that later checks compare real paths.
func PrepareScratch(dirs []string) ([]string, error) {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("scratch dir %s: %w", d, err)
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("create scratch dir: %w", err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("scratch dir %s: %w", d, err)
		}
		out = append(out, real)
	}
	return out, nil
}

// resolveExisting cleans p and resolves the symlinks of its longest existing prefix; the part that
// does not exist yet is appended as it is.
func resolveExisting(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// scratchDir returns the real path to give the kernel for an item's `dir`, or errScratch.
func scratchDir(given string, roots []string) (string, error) {
	if !filepath.IsAbs(given) {
		return "", errScratch
	}
	real := resolveExisting(given)
	for _, root := range roots {
		rel, err := filepath.Rel(root, real)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return real, nil
		}
	}
	return "", errScratch
}
