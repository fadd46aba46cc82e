// Package runner executes runs: one at a time, one kernel process at a time. Each item is measured in
// several launches (kernel processes in their own process group, with a timeout each), interleaved
// round-robin over the run's items; disturbed launches are re-measured at the end of the run. Every
// item ends as a ResultReport written to the spool before it is sent, so nothing measured is lost to a
// dropped connection.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	"github.com/ctxbench/ctxbench/agent/internal/defaults"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// Defaults for Options.
const (
	DefaultItemTimeout = 600 * time.Second
	DefaultGrace       = time.Second        // docs/architecture.md: a cancelled kernel stops within 2 s
	maxItemTimeout     = 7 * 24 * time.Hour // keeps a huge timeout_s from overflowing a Duration
)

// Sender delivers a message to the server if a stream is up; false means it was not sent (results
// stay in the spool and are re-sent after the next Hello; progress updates are advisory).
type Sender interface {
	Send(*agentv1.ConnectRequest) bool
}

// Options configure a Runner.
type Options struct {
	Catalog     *catalog.Catalog
	KernelsDir  string
	Spool       *spool.Spool
	Sender      Sender
	Log         *slog.Logger
	ItemTimeout time.Duration // per launch, when the item gives none; DefaultItemTimeout if zero
	Grace       time.Duration // SIGTERM → SIGKILL; DefaultGrace if zero
	// ScratchDirs (see PrepareScratch) bound every `dir` parameter; the first is the default `dir`.
	ScratchDirs []string

	// Sampling design (docs/architecture.md "Sampling design"); zero values take the defaults.
	Launches             int      // kernel processes per item when the item gives none; DefaultLaunches
	MinRepsPerLaunch     int      // DefaultMinRepsPerLaunch
	DisturbThreshold     float64  // DefaultDisturbThreshold
	MinCPUWallRatio      float64  // DefaultMinCPUWallRatio
	MaxRemeasuresPerItem int      // DefaultMaxRemeasuresPerItem
	RemeasureShare       float64  // re-measurements per run, as a share of its launches; DefaultRemeasureShare
	HostStat             HostStat // ReadProcStat when nil

	clock clock // what paces progress (progress.go); the real one when nil
}

// Runner runs StartRun requests one at a time, in arrival order. Safe for concurrent use.
type Runner struct {
	opts Options
	log  *slog.Logger
	out  *coalescer // every message to the server goes through it

	mu      sync.Mutex
	queue   []*job
	current *job
	wake    chan struct{}
}

type job struct {
	run       *agentv1.StartRun
	cancelled bool               // guarded by Runner.mu
	cancel    context.CancelFunc // set when the job starts; guarded by Runner.mu
}

// New returns a Runner; call Run to start executing.
func New(opts Options) *Runner {
	defaults.Positive(&opts.ItemTimeout, DefaultItemTimeout)
	defaults.Positive(&opts.Grace, DefaultGrace)
	opts.Log = defaults.Log(opts.Log)
	defaults.Positive(&opts.Launches, DefaultLaunches)
	defaults.Positive(&opts.MinRepsPerLaunch, DefaultMinRepsPerLaunch)
	defaults.Positive(&opts.DisturbThreshold, DefaultDisturbThreshold)
	defaults.Positive(&opts.MinCPUWallRatio, DefaultMinCPUWallRatio)
	defaults.Positive(&opts.MaxRemeasuresPerItem, DefaultMaxRemeasuresPerItem)
	defaults.Positive(&opts.RemeasureShare, DefaultRemeasureShare)
	if opts.HostStat == nil {
		opts.HostStat = ReadProcStat
	}
	if opts.clock == nil {
		opts.clock = realClock{}
	}
	return &Runner{opts: opts, log: opts.Log, out: newCoalescer(opts.Sender, opts.clock), wake: make(chan struct{}, 1)}
}

// StartRun queues a run. A run already executing or queued is ignored (the server re-sends StartRun
// after a reconnect), unless it was cancelled: then this StartRun is a retry, which runs once the
// cancelled run has wound down (executing) or instead of it (queued).
func (r *Runner) StartRun(m *agentv1.StartRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil && r.current.run.GetRunId() == m.GetRunId() && !r.current.cancelled {
		r.log.Info("StartRun for the run already executing; ignored", "run", m.GetRunId())
		return
	}
	for i, j := range r.queue {
		if j.run.GetRunId() != m.GetRunId() {
			continue
		}
		if j.cancelled {
			r.log.Info("a cancelled queued run started again", "run", m.GetRunId())
			r.queue[i] = &job{run: m}
		} else {
			r.log.Info("StartRun for a run already queued; ignored", "run", m.GetRunId())
		}
		return
	}
	r.queue = append(r.queue, &job{run: m})
	if r.current != nil {
		r.log.Info("run queued behind the current one", "run", m.GetRunId(), "items", len(m.GetItems()),
			"current", r.current.run.GetRunId(), "queued", len(r.queue))
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// CancelRun stops the run: the running kernel's process group is killed and every item still without
// a result is reported CANCELLED. A queued run is cancelled the same way when its turn comes, without
// running anything.
func (r *Runner) CancelRun(m *agentv1.CancelRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil && r.current.run.GetRunId() == m.GetRunId() {
		r.log.Info("cancelling the current run", "run", m.GetRunId())
		r.current.cancelled = true
		if r.current.cancel != nil {
			r.current.cancel()
		}
		return
	}
	for _, j := range r.queue {
		if j.run.GetRunId() == m.GetRunId() {
			r.log.Info("cancelling a queued run", "run", m.GetRunId())
			j.cancelled = true
			return
		}
	}
	r.log.Info("CancelRun for a run this agent does not hold; ignored", "run", m.GetRunId())
}

// CurrentRunID is the run executing now, "" when idle.
func (r *Runner) CurrentRunID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current == nil {
		return ""
	}
	return r.current.run.GetRunId()
}

// Run executes queued runs until ctx ends. On ctx end a running kernel is killed (its item gets no
// result: the server re-dispatches items without results when the agent comes back).
func (r *Runner) Run(ctx context.Context) {
	for {
		j, runCtx := r.next(ctx)
		if j == nil {
			return
		}
		r.execute(ctx, runCtx, j)
		r.out.Flush() // an interrupted run holds progress no final message sent
		r.mu.Lock()
		j.cancel()
		r.current = nil
		r.mu.Unlock()
	}
}

func (r *Runner) next(ctx context.Context) (*job, context.Context) {
	for {
		r.mu.Lock()
		if len(r.queue) > 0 {
			j := r.queue[0]
			r.queue = r.queue[1:]
			runCtx, cancel := context.WithCancel(ctx)
			j.cancel = cancel
			if j.cancelled {
				cancel()
			}
			r.current = j
			r.mu.Unlock()
			return j, runCtx
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil
		case <-r.wake:
		}
	}
}

func (r *Runner) execute(ctx, runCtx context.Context, j *job) {
	run := j.run
	log := r.log.With("run", run.GetRunId())
	log.Info("run started", "items", len(run.GetItems()))
	r.update(&agentv1.RunUpdate{RunId: run.GetRunId(), State: agentv1.ItemState_ITEM_STATE_ACCEPTED,
		Message: fmt.Sprintf("%d items", len(run.GetItems()))})
	if !r.measure(ctx, runCtx, run) {
		log.Warn("agent stopping; run interrupted")
		return
	}
	r.update(&agentv1.RunUpdate{RunId: run.GetRunId(), State: agentv1.ItemState_ITEM_STATE_RUN_FINISHED})
	log.Info("run finished", "cancelled", runCtx.Err() != nil)
}

// update sends u: RUNNING progress paced (progress.go), any other state at once.
func (r *Runner) update(u *agentv1.RunUpdate) { r.out.update(u) }

func shortStatus(s agentv1.ResultStatus) string {
	switch s {
	case agentv1.ResultStatus_RESULT_STATUS_OK:
		return "ok"
	case agentv1.ResultStatus_RESULT_STATUS_FAILED:
		return "failed"
	case agentv1.ResultStatus_RESULT_STATUS_UNSUPPORTED:
		return "unsupported"
	case agentv1.ResultStatus_RESULT_STATUS_CANCELLED:
		return "cancelled"
	}
	return s.String()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
