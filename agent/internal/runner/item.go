package runner

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/process"
)

// prepare checks an item before its first launch. It returns nil when the item needs no launch: it
// already has a result in the spool, the run was cancelled, or the item is refused (those two are
// reported here).
func (r *Runner) prepare(runCtx context.Context, runID string, index int, item *agentv1.RunItem) *itemRun {
	log := r.log.With("run", runID, "item", index, "item_id", item.GetItemId(), "kernel", item.GetKernelId())
	prev, err := r.opts.Spool.ByItem(item.GetItemId())
	switch {
	case err != nil:
		log.Warn("cannot search the spool for an earlier result; running the item", "err", err)
	case prev != nil && prev.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_CANCELLED:
		// Only the server's CancelRun makes one; a StartRun for the item after it is a retry (its ack may
		// still be on the way): the item runs again, and the cancelled result is delivered as it was.
		log.Info("item's cancelled result not acknowledged yet; running its retry", "result", prev.GetResultId())
	case prev != nil:
		log.Info("item already has a result in the spool; not running it again", "result", prev.GetResultId())
		return nil
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
		r.finish(log, rep)
		return nil
	}
	spec, params, err := r.validate(item)
	if err != nil {
		now := timestamppb.Now()
		rep.StartedAt, rep.FinishedAt = now, now
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_FAILED
		rep.Error = "refused: " + err.Error()
		r.finish(log, rep)
		return nil
	}
	rep.Params = params

	timeout := r.opts.ItemTimeout
	if ts := item.GetTimeoutS(); ts > 0 {
		timeout = time.Duration(min(ts, maxItemTimeout.Seconds()) * float64(time.Second))
	}
	launches, reps := r.plan(item)
	a := attemptSpec{spec: spec, params: params, item: item, timeout: timeout,
		path: filepath.Join(r.opts.KernelsDir, spec.GetExecutable()), args: kernelArgs(item, params, reps)}
	return &itemRun{index: index, item: item, log: log, base: rep, a: a, planned: launches}
}

// plan is how many launches an item gets and how many repetitions each launch takes: the item's
// repetitions shared out (ceil), at least MinRepsPerLaunch each (or all of them when fewer were asked).
// Repetitions 0 leaves each launch at the kernel's own default.
func (r *Runner) plan(item *agentv1.RunItem) (launches, repsPerLaunch int) {
	launches = int(item.GetLaunches())
	if launches <= 0 {
		launches = r.opts.Launches
	}
	launches = min(launches, maxLaunches)
	reps := int(item.GetRepetitions())
	if reps == 0 {
		return launches, 0
	}
	per := (reps + launches - 1) / launches
	return launches, max(per, min(reps, r.opts.MinRepsPerLaunch))
}

// maxLaunches bounds RunItem.launches whatever the server asks.
const maxLaunches = 100

type attemptSpec struct {
	spec    *agentv1.KernelSpec
	params  map[string]string
	item    *agentv1.RunItem
	timeout time.Duration
	path    string
	args    []string
}

// attempt runs the kernel once (one launch) and classifies the outcome (ids are filled in by the caller).
// stopping says the agent is shutting down, in which case there is no result to report.
func (r *Runner) attempt(ctx, runCtx context.Context, a attemptSpec) (rep *agentv1.ResultReport, res process.Result, stopping bool) {
	workDir := ""
	if len(r.opts.ScratchDirs) > 0 {
		workDir = r.opts.ScratchDirs[0]
	}
	res = execKernel(runCtx, a.path, workDir, a.args, a.timeout, r.opts.Grace)
	if ctx.Err() != nil {
		return nil, res, true
	}
	rep = &agentv1.ResultReport{
		Params:     a.params,
		StartedAt:  timestamppb.New(res.Started),
		FinishedAt: timestamppb.New(res.End),
		ExitCode:   int32(res.ExitCode),
		Status:     agentv1.ResultStatus_RESULT_STATUS_FAILED,
	}
	line := process.LastLine(res.StderrTail)
	switch {
	case res.StartErr != nil:
		rep.Error = fmt.Sprintf("start kernel executable %s: %v", a.spec.GetExecutable(), res.StartErr)
	case res.Interrupted:
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_CANCELLED
		rep.Error = "run cancelled while the kernel ran; kernel stopped"
	case res.TimedOut:
		rep.Error = fmt.Sprintf("kernel timed out after %s and was killed", a.timeout)
	case res.Signal != 0:
		rep.Error = "kernel " + res.Describe(a.timeout) + withLine(line)
	case res.ExitCode == 0 && res.StdoutOver:
		rep.Error = fmt.Sprintf("kernel printed more than %d bytes on stdout", maxStdout)
	case res.ExitCode == 0:
		if err := fillFromOutput(rep, a.spec, a.params, res.Stdout); err != nil {
			rep.Error = err.Error()
		}
	case res.ExitCode == 2:
		rep.Error = "kernel refused its arguments (exit 2)" + withLine(line)
	case res.ExitCode == 3:
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_UNSUPPORTED
		rep.Error = line
		if rep.Error == "" {
			rep.Error = "kernel cannot run on this host (exit 3)"
		}
	default:
		rep.Error = "kernel failed with " + res.Describe(a.timeout) + withLine(line)
	}
	if rep.Status != agentv1.ResultStatus_RESULT_STATUS_OK {
		rep.StderrTail = res.StderrTail
	}
	return rep, res, false
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
	// A `dir` the item gives must lie under a scratch root. Without one (absent, or the kernel's own
	// default, which the server fills in), the kernel gets the first scratch root: as `dir` when the
	// kernel's default names a directory, and always as its working directory (an empty `dir` of the
	// storage kernels means "the working directory").
	if _, ok := params[ScratchParam]; ok {
		def := ""
		for _, p := range spec.GetParams() {
			if p.GetName() == ScratchParam {
				def = p.GetDefaultValue()
			}
		}
		given, set := item.GetParams()[ScratchParam]
		switch {
		case set && given != def:
			if params[ScratchParam], err = scratchDir(given, r.opts.ScratchDirs); err != nil {
				return nil, nil, fmt.Errorf("kernel %s: %w", item.GetKernelId(), err)
			}
		case def != "" && len(r.opts.ScratchDirs) > 0:
			params[ScratchParam] = r.opts.ScratchDirs[0]
		case def != "":
			return nil, nil, fmt.Errorf("kernel %s: %w", item.GetKernelId(), errScratch)
		}
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

// kernelArgs is the kernel CLI for one launch: --run ID [--param k=v]... [--repetitions N] [--min-time S]
// [--sample-time S].
func kernelArgs(item *agentv1.RunItem, params map[string]string, reps int) []string {
	args := []string{"--run", item.GetKernelId()}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--param", k+"="+params[k])
	}
	if reps > 0 {
		args = append(args, "--repetitions", strconv.Itoa(reps))
	}
	if s := item.GetMinTimeS(); s > 0 {
		args = append(args, "--min-time", catalog.FormatFloat(s))
	}
	if s := item.GetSampleTimeS(); s > 0 {
		args = append(args, "--sample-time", catalog.FormatFloat(s))
	}
	return args
}

// finish spools the result (durably), then sends it: the item's final state.
func (r *Runner) finish(log *slog.Logger, rep *agentv1.ResultReport) {
	if n := proto.Size(rep); n > maxReportBytes {
		// The server could never receive it: report the failure instead of the data.
		*rep = agentv1.ResultReport{
			ResultId: rep.GetResultId(), RunId: rep.GetRunId(), ItemId: rep.GetItemId(), KernelId: rep.GetKernelId(),
			Params: rep.GetParams(), Status: agentv1.ResultStatus_RESULT_STATUS_FAILED, ExitCode: rep.GetExitCode(),
			StartedAt: rep.GetStartedAt(), FinishedAt: rep.GetFinishedAt(),
			Error: fmt.Sprintf("result is %d bytes, more than the %d a report may carry", n, maxReportBytes),
		}
	}
	if err := r.opts.Spool.Put(rep); err != nil {
		log.Error("cannot spool the result; sending it anyway (lost if this send fails)", "result", rep.GetResultId(), "err", err)
	}
	sent := r.out.result(rep) // the item's final state: no DONE update after it
	attrs := []any{"status", shortStatus(rep.GetStatus()), "result", rep.GetResultId(), "sent", sent}
	if rep.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_OK {
		attrs = append(attrs, "median", strconv.FormatFloat(median(rep.GetSamples()), 'g', 5, 64), "unit", rep.GetUnit(), "samples", len(rep.GetSamples()))
		attrs = append(attrs, "launches", len(rep.GetLaunches()), "remeasured", rep.GetReruns(),
			"disturbance", strconv.FormatFloat(rep.GetDisturbance(), 'f', 3, 64), "noisy", rep.GetNoisy())
		log.Info("item finished", attrs...)
		return
	}
	attrs = append(attrs, "error", rep.GetError())
	log.Warn("item finished", attrs...)
}
