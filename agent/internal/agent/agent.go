// Package agent wires the agent together: spool and identity, kernel catalog, runner and connection.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	"github.com/ctxbench/ctxbench/agent/internal/config"
	"github.com/ctxbench/ctxbench/agent/internal/conn"
	"github.com/ctxbench/ctxbench/agent/internal/defaults"
	"github.com/ctxbench/ctxbench/agent/internal/facts"
	"github.com/ctxbench/ctxbench/agent/internal/runner"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// Options configure Run. Zero durations take the packages' defaults; tests shorten them.
type Options struct {
	Config     config.Config
	Version    string
	Log        *slog.Logger
	MinBackoff time.Duration
	MaxBackoff time.Duration
	KillGrace  time.Duration
}

// Run starts the agent and blocks until ctx ends (then it kills a running kernel, closes the stream
// and returns nil). Errors are start-up failures: an unusable spool or kernels directory.
func Run(ctx context.Context, o Options) error {
	log := defaults.Log(o.Log)
	cfg := o.Config
	sp, err := spool.Open(cfg.Spool)
	if err != nil {
		return err
	}
	release, err := sp.Lock()
	if err != nil {
		return err
	}
	defer release()
	id, err := sp.AgentID()
	if err != nil {
		return err
	}
	credential, err := sp.Credential()
	if err != nil {
		return fmt.Errorf("read machine credential: %w", err)
	}
	hostname, _ := os.Hostname()
	name := cfg.Name
	if name == "" {
		name = hostname
	}
	scratch, err := runner.PrepareScratch(cfg.ScratchDirs)
	if err != nil {
		return err
	}
	log.Info("ctxbench agent starting", "version", o.Version, "agent_id", id, "name", name,
		"server", cfg.Server, "kernels_dir", cfg.Kernels, "state_dir", cfg.Spool, "scratch", scratch,
		"enrolled", credential != "", "tls", !cfg.Insecure, "labels", config.LabelArgs(cfg.Labels))

	cat, err := loadCatalog(ctx, cfg.Kernels, log)
	if cat == nil {
		return err
	}

	out := conn.NewOutbox()
	r := runner.New(runner.Options{
		Catalog: cat, KernelsDir: cfg.Kernels, Spool: sp, Sender: out, Log: log, Grace: o.KillGrace,
		ScratchDirs: scratch,
	})
	runCtx, stopRunner := context.WithCancel(ctx)
	defer stopRunner()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.Run(runCtx)
	}()
	err = conn.Run(ctx, conn.Options{
		Server: cfg.Server, EnrollToken: cfg.Token, JoinToken: cfg.JoinToken, Credential: credential,
		SaveCredential: sp.SaveCredential, EnrollKey: sp.EnrollKey, Hostname: hostname,
		TLS:     conn.TLSOptions{CAFile: cfg.CAFile, CAFingerprint: cfg.CAFingerprint, Insecure: cfg.Insecure},
		AgentID: id, AgentVersion: o.Version, Name: name, Labels: cfg.Labels,
		Kernels: cat.Kernels(), Facts: facts.Gather, Spool: sp, Outbox: out, Handler: r, Log: log,
		MinBackoff: o.MinBackoff, MaxBackoff: o.MaxBackoff,
	})
	if err != nil {
		// No stream can ever be opened; stop the runner too.
		var refused *conn.EnrollRefusedError
		var revoked *conn.RevokedError
		if !errors.As(err, &refused) && !errors.As(err, &revoked) { // logged already, as one clear line
			log.Error("cannot connect", "err", err)
		}
	}
	stopRunner()
	wg.Wait()
	return err
}

// loadCatalog lists the kernels in dir; a nil catalog with a nil error means ctx ended first.
func loadCatalog(ctx context.Context, dir string, log *slog.Logger) (*catalog.Catalog, error) {
	cat, err := catalog.Load(ctx, dir, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("load kernel catalog: %w", err)
	}
	if len(cat.Kernels()) == 0 {
		log.Warn("no kernels found: the agent connects but cannot run anything", "kernels_dir", dir)
	} else {
		log.Info("kernel catalog ready", "kernels", len(cat.Kernels()))
	}
	return cat, nil
}

// ExitStatus is the process exit status for what Run returned: 0 for nil, conn.ExitRevoked for a
// revoked machine (the systemd unit does not restart it), 1 for anything else.
func ExitStatus(err error) int {
	var revoked *conn.RevokedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &revoked):
		return conn.ExitRevoked
	default:
		return 1
	}
}
