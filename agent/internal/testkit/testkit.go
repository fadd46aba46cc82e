// Package testkit helps the agent's tests: it builds the fake kernel executable (once per test
// binary) and places copies of it in kernels directories.
package testkit

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildOut  []byte
)

// FakeKernel puts the fake kernel executable at dir/name and returns its path.
func FakeKernel(t testing.TB, dir, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "ctxbench-fakekernel-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(tmp, "fakekernel")
		cmd := exec.Command("go", "build", "-o", buildPath, "github.com/ctxbench/ctxbench/agent/internal/testkit/fakekernel")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build fake kernel: %v\n%s", buildErr, buildOut)
	}
	dst := filepath.Join(dir, name)
	if err := copyFile(buildPath, dst); err != nil {
		t.Fatalf("place fake kernel: %v", err)
	}
	return dst
}

func copyFile(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Main runs the tests, then the cleanups, and removes the built fake kernel. Call it from TestMain.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if buildPath != "" {
		_ = os.RemoveAll(filepath.Dir(buildPath))
	}
	os.Exit(code)
}
