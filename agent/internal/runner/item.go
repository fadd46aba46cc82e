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
)

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
	a := attemptSpec{spec: spec, params: params, item: item, timeout: timeout,
		path: filepath.Join(r.opts.KernelsDir, spec.GetExecutable()), args: kernelArgs(item, params)}
	rerunCV, maxReruns := item.GetRerunCv(), min(int(item.GetMaxReruns()), maxRerunsCap)
	if rerunCV <= 0 {
		maxReruns = 0
	}
	var (
		best    *agentv1.ResultReport // the measured attempt with the lowest CV
		bestCV  float64
		cvs     []float64
		started *timestamppb.Timestamp
	)
	for n := 0; ; n++ {
		msg := item.GetKernelId()
		if n > 0 {
			msg = fmt.Sprintf("%s rerun %d/%d (cv %.2f%% > %.2f%%)", item.GetKernelId(), n, maxReruns, cvs[n-1]*100, rerunCV*100)
		}
		r.update(&agentv1.RunUpdate{RunId: runID, State: agentv1.ItemState_ITEM_STATE_RUNNING,
			ItemIndex: int32(index), ItemId: item.GetItemId(), Message: msg})
		log.Info("kernel starting", "executable", spec.GetExecutable(), "args", a.args, "timeout", timeout, "attempt", n+1)
		got, stopping := r.attempt(ctx, runCtx, a)
		if stopping {
			log.Warn("agent stopping: kernel killed; the item is left without a result for the server to re-dispatch")
			return
		}
		if started == nil {
			started = got.GetStartedAt()
		}
		if got.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
			if best == nil || got.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_CANCELLED {
				best = got // nothing measured yet, or the run was cancelled: this attempt is the outcome
				break
			}
			log.Warn("rerun failed; keeping the best measured attempt", "attempt", n+1, "error", got.GetError())
			break
		}
		cv := coefficientOfVariation(got.GetSamples())
		cvs = append(cvs, cv)
		if best == nil || cv < bestCV {
			best, bestCV = got, cv
		}
		if n >= maxReruns || cv <= rerunCV {
			break
		}
		log.Info("samples too noisy; re-running the item", "cv", strconv.FormatFloat(cv, 'g', 3, 64),
			"rerun_cv", rerunCV, "rerun", n+1, "max_reruns", maxReruns)
	}
	best.ResultId, best.RunId, best.ItemId, best.KernelId = rep.GetResultId(), runID, item.GetItemId(), item.GetKernelId()
	if best.GetStatus() == agentv1.ResultStatus_RESULT_STATUS_OK && rerunCV > 0 {
		best.Reruns = int32(len(cvs) - 1)
		best.Noisy = bestCV > rerunCV
		best.AttemptCvs = cvs
		best.StartedAt = started // the item's whole span: first attempt's start to the last one's end
		best.FinishedAt = timestamppb.Now()
	}
	r.finish(log, index, best)
}

// maxRerunsCap bounds RunItem.max_reruns whatever the server asks.
const maxRerunsCap = 100

type attemptSpec struct {
	spec    *agentv1.KernelSpec
	params  map[string]string
	item    *agentv1.RunItem
	timeout time.Duration
	path    string
	args    []string
}

// attempt runs the kernel once and classifies the outcome (ids are filled in by the caller).
// stopping says the agent is shutting down, in which case there is no result to report.
func (r *Runner) attempt(ctx, runCtx context.Context, a attemptSpec) (rep *agentv1.ResultReport, stopping bool) {
	workDir := ""
	if len(r.opts.ScratchDirs) > 0 {
		workDir = r.opts.ScratchDirs[0]
	}
	res := execKernel(runCtx, a.path, workDir, a.args, a.timeout, r.opts.Grace)
	if ctx.Err() != nil {
		return nil, true
	}
	rep = &agentv1.ResultReport{
		Params:     a.params,
		StartedAt:  timestamppb.New(res.started),
		FinishedAt: timestamppb.New(res.end),
		ExitCode:   int32(res.exitCode),
		Status:     agentv1.ResultStatus_RESULT_STATUS_FAILED,
	}
	line := lastLine(res.stderrTail)
	switch {
	case res.startErr != nil:
		rep.Error = fmt.Sprintf("start kernel executable %s: %v", a.spec.GetExecutable(), res.startErr)
	case res.interrupted:
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_CANCELLED
		rep.Error = "run cancelled while the kernel ran; kernel stopped"
	case res.timedOut:
		rep.Error = fmt.Sprintf("kernel timed out after %s and was killed", a.timeout)
	case res.signal != 0:
		rep.Error = "kernel " + describeExit(res) + withLine(line)
	case res.exitCode == 0 && res.stdoutOver:
		rep.Error = fmt.Sprintf("kernel printed more than %d bytes on stdout", maxStdout)
	case res.exitCode == 0:
		if err := fillFromOutput(rep, a.spec, a.params, res.stdout); err != nil {
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
	return rep, false
}

// coefficientOfVariation is the sample standard deviation (n-1) over the mean, as the server computes
// it; 0 for fewer than two samples or a zero mean.
func coefficientOfVariation(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / math.Abs(mean)
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
	if cv := item.GetRerunCv(); cv < 0 || math.IsNaN(cv) || math.IsInf(cv, 0) {
		return nil, nil, fmt.Errorf("kernel %s: rerun_cv %v is not a finite non-negative number", item.GetKernelId(), cv)
	}
	if item.GetMaxReruns() < 0 {
		return nil, nil, fmt.Errorf("kernel %s: max_reruns %d is negative", item.GetKernelId(), item.GetMaxReruns())
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
		if len(rep.GetAttemptCvs()) > 0 {
			attrs = append(attrs, "reruns", rep.GetReruns(), "noisy", rep.GetNoisy())
		}
		log.Info("item finished", attrs...)
		return
	}
	attrs = append(attrs, "error", rep.GetError())
	log.Warn("item finished", attrs...)
}
