// Package testkit helps the agent's tests: it builds Go executables they run (the fake kernel, the
// agent itself) once per test binary, and places copies of the fake kernel in kernels directories.
package testkit

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// FakeKernelPackage is the fake kernel executable's package.
const FakeKernelPackage = "github.com/ctxbench/ctxbench/agent/internal/testkit/fakekernel"

type build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*build{}
)

// Binary builds the Go package pkg (an import path) once per test binary, into a temporary directory
// that Main removes, and returns the executable's path. A failed build fails t with the compiler's words.
func Binary(t testing.TB, pkg string) string {
	t.Helper()
	buildsMu.Lock()
	b := builds[pkg]
	if b == nil {
		b = &build{}
		builds[pkg] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		tmp, err := os.MkdirTemp("", "ctxbench-testkit-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(tmp, filepath.Base(pkg))
		b.out, b.err = exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, b.err, b.out)
	}
	return b.path
}

// FakeKernel puts the fake kernel executable at dir/name and returns its path.
func FakeKernel(t testing.TB, dir, name string) string {
	t.Helper()
	src := Binary(t, FakeKernelPackage)
	dst := filepath.Join(dir, name)
	if err := copyFile(src, dst); err != nil {
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

// Main runs the tests, then the cleanups, and removes what Binary built. Call it from TestMain.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	buildsMu.Lock()
	for _, b := range builds {
		if b.path != "" {
			_ = os.RemoveAll(filepath.Dir(b.path))
		}
	}
	buildsMu.Unlock()
	os.Exit(code)
}
