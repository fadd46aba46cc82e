// Command ctxbench is the command line of a ctxbench server: machines, kernels, runs, comparisons and a
// CI gate, over the REST API only. See docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxbench/ctxbench/agent/internal/cli"
)

// version is set at build time, as the agent's is: -ldflags "-X main.version=0.1.0+1a2b3c4" (Makefile).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := cli.Env{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		Version:   version,
		StderrTTY: cli.IsTerminal(os.Stderr),
	}
	if cli.IsTerminal(os.Stdin) {
		env.ReadSecret = cli.TerminalSecret(os.Stdin, os.Stderr)
	}
	code := cli.Main(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
