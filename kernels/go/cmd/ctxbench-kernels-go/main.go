// Command ctxbench-kernels-go is the Go kernel executable: it lists its kernels and runs one of them
// under testing.Benchmark, speaking the kernel CLI of DESIGN 3.1.
package main

import (
	"os"

	"github.com/ctxbench/ctxbench/kernels/go/internal/cli"
	"github.com/ctxbench/ctxbench/kernels/go/internal/kernels"
)

func main() {
	if code, ok := kernels.RunChild(os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
