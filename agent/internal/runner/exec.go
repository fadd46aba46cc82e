package runner

import (
	"context"
	"time"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	"github.com/ctxbench/ctxbench/agent/internal/process"
)

const (
	maxStdout     = 16 << 20 // a kernel result is a few KiB; more is a broken kernel
	stderrTailLen = 4 << 10
)

// execKernel runs one launch of a kernel (process.Run: its own process group, SIGTERM then SIGKILL to
// the group on timeout or when ctx ends, no grandchild left behind). workDir is the kernel's working
// directory ("" = the agent's): the first scratch root, where a storage kernel with an empty `dir`
// writes.
func execKernel(ctx context.Context, path, workDir string, args []string, timeout, grace time.Duration) process.Result {
	return process.Run(ctx, process.Spec{
		Path: path, Args: args, Dir: workDir, Env: catalog.KernelEnv(),
		Timeout: timeout, Grace: grace, MaxStdout: maxStdout, StderrTail: stderrTailLen,
	})
}
