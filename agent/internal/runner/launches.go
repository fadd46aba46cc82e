package runner

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// Sampling defaults, chosen from the measurements in docs/performance.md ("Launches").
const (
	DefaultLaunches         = 3 // kernel processes per item
	DefaultMinRepsPerLaunch = 2 // so every launch also shows its within-process spread
	// DefaultMaxRemeasuresPerItem and DefaultRemeasureShare bound the re-measurements: at most 2 per
	// item, and at most a quarter more launches than the run planned, so a host that stays busy costs
	// a bounded time and says so (noisy) instead of retrying for ever.
	DefaultMaxRemeasuresPerItem = 2
	DefaultRemeasureShare       = 0.25
)

// itemRun is one item's state across the run's rounds.
type itemRun struct {
	index      int
	item       *agentv1.RunItem
	log        *slog.Logger
	base       *agentv1.ResultReport // ids and validated params
	a          attemptSpec
	planned    int
	launches   []*agentv1.Launch
	outs       []*agentv1.ResultReport // each launch's parsed output, aligned with launches
	remeasures int
	started    *timestamppb.Timestamp
	done       bool
}

// disturbedKept says a kept launch is disturbed (the item wants a re-measurement). An item measured in
// short samples never does: its figure is a low percentile of samples shorter than a time slice, which a
// busy host does not move, and how much the host took is reported beside it (Launch.disturbed_samples,
// other_busy_frac) instead of being measured away.
func (ir *itemRun) disturbedKept() bool {
	if ir.item.GetSampleTimeS() > 0 {
		return false
	}
	for _, l := range ir.launches {
		if l.GetKept() && l.GetDisturbed() {
			return true
		}
	}
	return false
}

// measure runs the items' launches round-robin (item1.L0, item2.L0, …, item1.L1, …), one kernel process
// at a time, so each item's samples span the run; then it re-measures disturbed launches, round-robin
// again and bounded. An item's result is reported as soon as it needs no further launch. False when the
// agent is stopping (the items left have no result; the server re-dispatches them).
func (r *Runner) measure(ctx, runCtx context.Context, run *agentv1.StartRun) bool {
	var items []*itemRun
	rounds, total := 0, 0
	for i, it := range run.GetItems() {
		if ctx.Err() != nil {
			return false
		}
		if ir := r.prepare(runCtx, run.GetRunId(), i, it); ir != nil {
			items = append(items, ir)
			rounds = max(rounds, ir.planned)
			total += ir.planned
		}
	}
	m := newMeter(r.opts.HostStat)
	for round := 0; round < rounds; round++ {
		for _, ir := range items {
			if ir.done || round >= ir.planned {
				continue
			}
			if !r.launch(ctx, runCtx, m, ir, false) {
				return false
			}
			if !ir.done && round == ir.planned-1 && !ir.disturbedKept() {
				r.complete(ir)
			}
		}
	}
	budget := int(math.Ceil(r.opts.RemeasureShare * float64(total)))
	for {
		progressed := false
		for _, ir := range items {
			if ir.done {
				continue
			}
			if !ir.disturbedKept() || ir.remeasures >= r.opts.MaxRemeasuresPerItem || budget <= 0 {
				r.complete(ir)
				continue
			}
			budget--
			ir.remeasures++
			if !r.launch(ctx, runCtx, m, ir, true) {
				return false
			}
			progressed = true
		}
		if !progressed {
			return true
		}
	}
}

// launch runs one kernel process of ir and records what else used the host meanwhile. A failed or
// cancelled launch ends the item with that outcome. False when the agent is stopping.
func (r *Runner) launch(ctx, runCtx context.Context, m *meter, ir *itemRun, remeasure bool) bool {
	n := len(ir.launches)
	if runCtx.Err() != nil {
		rep := proto.Clone(ir.base).(*agentv1.ResultReport)
		now := timestamppb.Now()
		rep.StartedAt, rep.FinishedAt = ir.started, now
		if rep.StartedAt == nil {
			rep.StartedAt = now
		}
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_CANCELLED
		rep.Error = fmt.Sprintf("run cancelled after %d of this item's %d launches", n, ir.planned)
		if n == 0 {
			rep.Error = "run cancelled before this item started"
		}
		ir.done = true
		r.finish(ir.log, rep)
		return true
	}
	msg := fmt.Sprintf("%s launch %d/%d", ir.item.GetKernelId(), n+1, ir.planned)
	if remeasure {
		msg = fmt.Sprintf("%s re-measuring a disturbed launch (%d/%d)", ir.item.GetKernelId(), ir.remeasures, r.opts.MaxRemeasuresPerItem)
	}
	r.progress(ir, msg)
	ir.log.Info("kernel starting", "executable", ir.a.spec.GetExecutable(), "args", ir.a.args,
		"timeout", ir.a.timeout, "launch", n, "remeasure", remeasure)
	start := m.begin()
	got, res, stopping := r.attempt(ctx, runCtx, ir.a)
	if stopping {
		ir.log.Warn("agent stopping: kernel killed; the item is left without a result for the server to re-dispatch")
		return false
	}
	if ir.started == nil {
		ir.started = got.GetStartedAt()
	}
	if got.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK {
		got.ResultId, got.RunId, got.ItemId, got.KernelId = ir.base.GetResultId(), ir.base.GetRunId(), ir.item.GetItemId(), ir.item.GetKernelId()
		got.StartedAt = ir.started
		if n > 0 && got.GetError() != "" {
			got.Error = fmt.Sprintf("launch %d: %s", n+1, got.GetError())
		}
		ir.done = true
		r.finish(ir.log, got)
		return true
	}
	wall := res.End.Sub(res.Started)
	load := m.end(start, wall, res.CPU)
	l := &agentv1.Launch{Index: uint32(n), WallS: wall.Seconds(), CpuS: res.CPU.Seconds(),
		OtherBusyFrac: load.otherBusyFrac, StealFrac: load.stealFrac, ThrottledS: load.throttledS,
		Remeasured: remeasure, Samples: uint32(len(got.GetSamples()))}
	if sampled := got.GetLaunches(); len(sampled) == 1 {
		l.ShortSamples, l.DisturbedSamples = sampled[0].GetShortSamples(), sampled[0].GetDisturbedSamples()
		got.Launches = nil
	}
	why := r.disturbed(load, got.GetCounters())
	l.Disturbed = why != ""
	switch {
	case !remeasure:
		l.Kept = true
	case !l.Disturbed:
		// An undisturbed re-measurement replaces the most disturbed launch kept so far.
		var worst *agentv1.Launch
		for _, k := range ir.launches {
			if k.GetKept() && k.GetDisturbed() && (worst == nil || k.GetOtherBusyFrac() > worst.GetOtherBusyFrac()) {
				worst = k
			}
		}
		if worst != nil {
			worst.Kept, l.Kept = false, true
		}
	}
	if l.Disturbed {
		ir.log.Info("launch disturbed", "launch", n, "why", why, "kept", l.Kept)
	}
	ir.launches = append(ir.launches, l)
	ir.outs = append(ir.outs, got)
	r.progress(ir, fmt.Sprintf("%s launch %d/%d done", ir.item.GetKernelId(), len(ir.launches), ir.planned+ir.remeasures))
	return true
}

// progress tells the server where the item stands in its launches (RUNNING, as a launch starts and as it
// ends): launches interleave round-robin over the run's items, so a run's progress is counted in
// launches, not in items, which all finish in the last round. A server that asks for it gets these
// coalesced (progress.go).
func (r *Runner) progress(ir *itemRun, msg string) {
	wall := 0.0
	for _, l := range ir.launches {
		wall += l.GetWallS()
	}
	r.update(&agentv1.RunUpdate{RunId: ir.base.GetRunId(), State: agentv1.ItemState_ITEM_STATE_RUNNING,
		ItemIndex: int32(ir.index), ItemId: ir.item.GetItemId(), Message: msg,
		LaunchesDone: uint32(len(ir.launches)), LaunchesPlanned: uint32(ir.planned + ir.remeasures), LaunchesWallS: wall})
}

// disturbed says why a launch counts as disturbed, "" when it does not.
func (r *Runner) disturbed(load launchLoad, counters map[string]float64) string {
	thr := r.opts.DisturbThreshold
	switch {
	case load.otherBusyFrac > thr:
		return "other processes kept " + pct(load.otherBusyFrac) + " of its CPUs busy"
	case load.stealFrac > thr:
		return "steal took " + pct(load.stealFrac) + " of its CPUs"
	}
	if ratio, ok := counters["cpu_wall_ratio"]; ok && ratio > 0 && ratio < r.opts.MinCPUWallRatio {
		return "cpu_wall_ratio " + strconv.FormatFloat(ratio, 'f', 3, 64) + ": the kernel waited for a CPU"
	}
	return ""
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + " %" }

// complete reports an item whose launches are all done: the kept launches' samples concatenated in
// launch order, with the launch index of each.
func (r *Runner) complete(ir *itemRun) {
	ir.done = true
	rep := proto.Clone(ir.base).(*agentv1.ResultReport)
	rep.Status = agentv1.ResultStatus_RESULT_STATUS_OK
	rep.ExitCode = 0
	rep.StartedAt, rep.FinishedAt = ir.started, timestamppb.Now()
	rep.Launches = ir.launches
	withIters := true
	counters := map[string][]float64{}
	for i, l := range ir.launches {
		out := ir.outs[i]
		if l.GetRemeasured() {
			rep.Reruns++
		}
		if !l.GetKept() {
			continue
		}
		if rep.Unit == "" {
			rep.Params, rep.Unit, rep.Harness = out.GetParams(), out.GetUnit(), out.GetHarness()
		}
		rep.Samples = append(rep.Samples, out.GetSamples()...)
		for range out.GetSamples() {
			rep.SampleLaunches = append(rep.SampleLaunches, l.GetIndex())
		}
		if len(out.GetIterations()) == len(out.GetSamples()) {
			rep.Iterations = append(rep.Iterations, out.GetIterations()...)
		} else {
			withIters = false
		}
		for k, v := range out.GetCounters() {
			counters[k] = append(counters[k], v)
		}
		rep.Noisy = rep.Noisy || (l.GetDisturbed() && ir.item.GetSampleTimeS() == 0)
		rep.Disturbance = max(rep.Disturbance, l.GetOtherBusyFrac())
	}
	if !withIters {
		rep.Iterations = nil
	}
	if len(counters) > 0 {
		rep.Counters = make(map[string]float64, len(counters))
		for k, vs := range counters {
			rep.Counters[k] = median(vs) // per launch figures; the median is the launch-level summary
		}
	}
	if err := samplesOverLimit(len(rep.GetSamples())); err != nil {
		rep.Status = agentv1.ResultStatus_RESULT_STATUS_FAILED
		rep.Error = "launches gave " + err.Error()
		rep.Samples, rep.SampleLaunches, rep.Iterations = nil, nil, nil
	}
	r.finish(ir.log, rep)
}
