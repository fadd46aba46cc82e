// Package runner executes runs: one at a time, items in order, each kernel a child process in its own
// process group with a timeout. Every item ends as a ResultReport written to the spool before it is
// sent, so nothing measured is lost to a dropped connection.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// Defaults for Options.
const (
	DefaultItemTimeout = 600 * time.Second
	DefaultGrace       = 2 * time.Second
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
	ItemTimeout time.Duration // when the item gives none; DefaultItemTimeout if zero
	Grace       time.Duration // SIGTERM → SIGKILL; DefaultGrace if zero
}

// Runner runs StartRun requests one at a time, in arrival order. Safe for concurrent use.
type Runner struct {
	opts Options
	log  *slog.Logger

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
	if opts.ItemTimeout <= 0 {
		opts.ItemTimeout = DefaultItemTimeout
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Runner{opts: opts, log: opts.Log, wake: make(chan struct{}, 1)}
}

// StartRun queues a run. A run already executing or queued is ignored (the server re-sends StartRun
// after a reconnect).
func (r *Runner) StartRun(m *agentv1.StartRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil && r.current.run.GetRunId() == m.GetRunId() {
		r.log.Info("StartRun for the run already executing; ignored", "run", m.GetRunId())
		return
	}
	for _, j := range r.queue {
		if j.run.GetRunId() == m.GetRunId() {
			r.log.Info("StartRun for a run already queued; ignored", "run", m.GetRunId())
			return
		}
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
	for i, item := range run.GetItems() {
		if ctx.Err() != nil {
			log.Warn("agent stopping; run interrupted", "remaining_items", len(run.GetItems())-i)
			return
		}
		r.runItem(ctx, runCtx, run.GetRunId(), i, item)
	}
	if ctx.Err() != nil {
		return
	}
	r.update(&agentv1.RunUpdate{RunId: run.GetRunId(), State: agentv1.ItemState_ITEM_STATE_RUN_FINISHED})
	log.Info("run finished", "cancelled", runCtx.Err() != nil)
}

func (r *Runner) runItem(ctx, runCtx context.Context, runID string, index int, item *agentv1.RunItem) {
	log := r.log.With("run", runID, "item", index, "item_id", item.GetItemId(), "kernel", item.GetKernelId())
	prev, err := r.opts.Spool.ByItem(item.GetItemId())
	if err != nil {
		log.Warn("cannot search the spool for an earlier result; running the item", "err", err)
	} else if prev != nil {
		log.Info("item already has a result in the spool; not running it again", "result", prev.GetResultId())
		return
	}
	rep := &agentv1.ResultReport{
		ResultId: uuid.NewString(),
		RunId:    runID,
		ItemId:   item.GetItemId(),
		KernelId: item.GetKernelId(),
		Params:   item.GetParams(),
		ExitCode: -1,
	}
	if runCtx.Err() != nil {
		now := timestamppb.Now()
		rep.StartedAt, rep.FinishedAt = now, now
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_CANCELLED
		rep.Error = "run cancelled before this item started"
		r.finish(log, index, rep)
		return
	}
	spec, params, err := r.validate(item)
	if err != nil {
		now := timestamppb.Now()
		rep.StartedAt, rep.FinishedAt = now, now
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_FAILED
		rep.Error = "refused: " + err.Error()
		r.finish(log, index, rep)
		return
	}
	rep.Params = params

	timeout := r.opts.ItemTimeout
	if ts := item.GetTimeoutS(); ts > 0 {
		timeout = time.Duration(min(ts, maxItemTimeout.Seconds()) * float64(time.Second))
	}
	path := filepath.Join(r.opts.KernelsDir, spec.GetExecutable())
	args := kernelArgs(item, params)
	r.update(&agentv1.RunUpdate{RunId: runID, State: agentv1.ItemState_ITEM_STATE_RUNNING,
		ItemIndex: int32(index), ItemId: item.GetItemId(), Message: item.GetKernelId()})
	log.Info("kernel starting", "executable", spec.GetExecutable(), "args", args, "timeout", timeout)

	res := execKernel(runCtx, path, args, timeout, r.opts.Grace)
	if ctx.Err() != nil {
		log.Warn("agent stopping: kernel killed; the item is left without a result for the server to re-dispatch")
		return
	}
	rep.StartedAt, rep.FinishedAt = timestamppb.New(res.started), timestamppb.New(res.end)
	rep.ExitCode = int32(res.exitCode)
	rep.Status = agentv1.ResultStatus_RESULT_STATUS_FAILED
	line := lastLine(res.stderrTail)
	switch {
	case res.startErr != nil:
		rep.Error = fmt.Sprintf("start kernel executable %s: %v", spec.GetExecutable(), res.startErr)
	case res.interrupted:
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_CANCELLED
		rep.Error = "run cancelled while the kernel ran; kernel stopped"
	case res.timedOut:
		rep.Error = fmt.Sprintf("kernel timed out after %s and was killed", timeout)
	case res.signal != 0:
		rep.Error = "kernel " + describeExit(res) + withLine(line)
	case res.exitCode == 0 && res.stdoutOver:
		rep.Error = fmt.Sprintf("kernel printed more than %d bytes on stdout", maxStdout)
	case res.exitCode == 0:
		if err := fillFromOutput(rep, spec, params, res.stdout); err != nil {
			rep.Error = err.Error()
		}
	case res.exitCode == 2:
		rep.Error = "kernel refused its arguments (exit 2)" + withLine(line)
	case res.exitCode == 3:
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_UNSUPPORTED
		rep.Error = line
		if rep.Error == "" {
			rep.Error = "kernel cannot run on this host (exit 3)"
		}
	default:
		rep.Error = "kernel failed with " + describeExit(res) + withLine(line)
	}
	if rep.Status != agentv1.ResultStatus_RESULT_STATUS_OK {
		rep.StderrTail = res.stderrTail
	}
	r.finish(log, index, rep)
}

func withLine(line string) string {
	if line == "" {
		return ""
	}
	return ": " + line
}

func (r *Runner) validate(item *agentv1.RunItem) (*agentv1.KernelSpec, map[string]string, error) {
	spec, params, err := r.opts.Catalog.Validate(item.GetKernelId(), item.GetParams())
	if err != nil {
		return nil, nil, err
	}
	if item.GetRepetitions() < 0 {
		return nil, nil, fmt.Errorf("kernel %s: repetitions %d is negative", item.GetKernelId(), item.GetRepetitions())
	}
	if mt := item.GetMinTimeS(); mt < 0 || math.IsNaN(mt) || math.IsInf(mt, 0) {
		return nil, nil, fmt.Errorf("kernel %s: min_time_s %v is not a finite non-negative number", item.GetKernelId(), mt)
	}
	if ts := item.GetTimeoutS(); ts < 0 || math.IsNaN(ts) || math.IsInf(ts, 0) {
		return nil, nil, fmt.Errorf("kernel %s: timeout_s %v is not a finite non-negative number", item.GetKernelId(), ts)
	}
	return spec, params, nil
}

// kernelArgs is the kernel CLI for one item: --run ID [--param k=v]... [--repetitions N] [--min-time S].
func kernelArgs(item *agentv1.RunItem, params map[string]string) []string {
	args := []string{"--run", item.GetKernelId()}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--param", k+"="+params[k])
	}
	if n := item.GetRepetitions(); n > 0 {
		args = append(args, "--repetitions", strconv.Itoa(int(n)))
	}
	if s := item.GetMinTimeS(); s > 0 {
		args = append(args, "--min-time", catalog.FormatFloat(s))
	}
	return args
}

// finish spools the result (durably), then sends it and the item's final RunUpdate.
func (r *Runner) finish(log *slog.Logger, index int, rep *agentv1.ResultReport) {
	if err := r.opts.Spool.Put(rep); err != nil {
		log.Error("cannot spool the result; sending it anyway (lost if this send fails)", "result", rep.GetResultId(), "err", err)
	}
	sent := r.opts.Sender.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_ResultReport{ResultReport: rep}})
	state := agentv1.ItemState_ITEM_STATE_DONE
	if rep.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_CANCELLED {
		state = agentv1.ItemState_ITEM_STATE_CANCELLED
	}
	r.update(&agentv1.RunUpdate{RunId: rep.GetRunId(), State: state, ItemIndex: int32(index),
		ItemId: rep.GetItemId(), Message: rep.GetStatus().String()})
	attrs := []any{"status", shortStatus(rep.GetStatus()), "result", rep.GetResultId(), "sent", sent}
	if rep.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_OK {
		attrs = append(attrs, "median", strconv.FormatFloat(median(rep.GetSamples()), 'g', 5, 64), "unit", rep.GetUnit(), "samples", len(rep.GetSamples()))
		log.Info("item finished", attrs...)
		return
	}
	attrs = append(attrs, "error", rep.GetError())
	log.Warn("item finished", attrs...)
}

func (r *Runner) update(u *agentv1.RunUpdate) {
	r.opts.Sender.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunUpdate{RunUpdate: u}})
}

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
