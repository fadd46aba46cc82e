// Command ctxbench-agent runs on a test host: it dials the ctxbench server, describes the machine and
// its kernels, and runs kernel executables when the server asks. See docs/architecture.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/ctxbench/ctxbench/agent/internal/agent"
	"github.com/ctxbench/ctxbench/agent/internal/config"
)

// version is set at build time from the VERSION file and the commit: -ldflags "-X main.version=0.1.0+1a2b3c4"
// (Makefile). Hello carries it, so every result records the agent that measured it.
var version = "dev"

func main() { os.Exit(run()) }

func run() int {
	cfg, err := config.Parse(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctxbench-agent: %v\n", err)
		return 2
	}
	if cfg.Version {
		fmt.Println("ctxbench-agent", version)
		return 0
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := agent.Run(ctx, agent.Options{Config: cfg, Version: version, Log: log}); err != nil {
		log.Error("agent failed", "err", err)
		return agent.ExitStatus(err) // 77 for a revoked machine: the unit does not restart it
	}
	log.Info("agent stopped")
	return 0
}
