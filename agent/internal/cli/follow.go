package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// followRuns follows every run's events until each ends, drawing progress on stderr, then prints the
// results. Exit 0 when every run succeeded, 1 when one failed or was cancelled.
func followRuns(ctx context.Context, env Env, c *Client, runs []Run, names map[string]string, asJSON bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan runEvent)
	state := make(map[string]*Run, len(runs))
	order := make([]string, 0, len(runs))
	for i := range runs {
		r := runs[i]
		state[r.ID] = &r
		order = append(order, r.ID)
		go streamRun(ctx, c, r.ID, events)
	}
	p := &progress{out: env.Stderr, tty: env.StderrTTY, names: names, start: time.Now(), last: map[string]string{},
		batch: len(runs) > 1}
	open := len(runs)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for open > 0 {
		select {
		case <-ctx.Done():
			p.clear()
			return &exitError{ExitInterrup, fmt.Errorf("interrupted: the runs go on (%s)", strings.Join(order, ", "))}
		case <-tick.C:
			p.draw(state, order)
		case ev := <-events:
			switch {
			case ev.err != nil:
				p.clear()
				return fmt.Errorf("follow run %s: %w", ev.runID, ev.err)
			case ev.result != nil:
				p.result(ev.result)
			case ev.run != nil:
				state[ev.runID] = ev.run
				if ev.end {
					open--
				}
				p.runChanged(ev.run)
			}
			p.draw(state, order)
		}
	}
	p.clear()
	return reportRuns(ctx, env, c, order, state, names, asJSON)
}

// reportRuns prints each finished run's results and failed items; exit 1 unless all succeeded.
func reportRuns(
	ctx context.Context, env Env, c *Client, order []string, state map[string]*Run, names map[string]string,
	asJSON bool,
) error {
	byRun := map[string]json.RawMessage{}
	var all []Result
	for _, id := range order {
		data, err := c.request(ctx, "GET", "/runs/"+id+"/results", nil, nil)
		if err != nil {
			return err
		}
		byRun[id] = data
		var rs []Result
		if err := decode(data, "GET /api/v1/runs/"+id+"/results", &rs); err != nil {
			return err
		}
		all = append(all, rs...)
	}
	switch {
	case asJSON && len(order) == 1:
		if err := writeRaw(env, byRun[order[0]]); err != nil {
			return err
		}
	case asJSON:
		data, _ := json.Marshal(byRun)
		if err := writeRaw(env, data); err != nil {
			return err
		}
	default:
		if err := printResults(env.Stdout, all, names, len(order) > 1); err != nil {
			return err
		}
	}
	ok := true
	for _, id := range order {
		r := state[id]
		fmt.Fprintf(env.Stderr, "run %s on %s: %s\n", id, names[r.MachineID], r.Status)
		if r.Status != "succeeded" {
			ok = false
			if r.Error != nil && *r.Error != "" {
				fmt.Fprintf(env.Stderr, "  %s\n", oneLine(*r.Error))
			}
		}
		for _, it := range r.Items {
			if it.State == "failed" || it.State == "cancelled" {
				msg := ""
				if it.Error != nil {
					msg = ": " + oneLine(*it.Error)
				}
				fmt.Fprintf(env.Stderr, "  item %d %s %s%s\n", it.Index, it.Kernel, it.State, msg)
			}
		}
	}
	if !ok {
		return &failure{ExitFailed}
	}
	return nil
}

func printResults(w io.Writer, rs []Result, names map[string]string, withMachine bool) error {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].MachineID != rs[j].MachineID && withMachine {
			return names[rs[i].MachineID] < names[rs[j].MachineID]
		}
		return false
	})
	header := []string{"KERNEL", "PARAMS", "FIGURE", "CI", "CV", "N", "UNIT"}
	if withMachine {
		header = append([]string{"MACHINE"}, header...)
	}
	t := newTable(w, header...)
	for _, r := range rs {
		ci := "-"
		if r.CILow != nil && r.CIHigh != nil {
			ci = fmt.Sprintf("[%s, %s]", num(*r.CILow), num(*r.CIHigh))
			if r.CIMethod != nil && *r.CIMethod == "minmax" {
				ci += " min-max"
			}
		}
		cv := "-"
		if r.CV != nil {
			cv = fmt.Sprintf("%.1f%%", *r.CV*100)
		}
		row := []string{r.Kernel, paramsText(r.ParamsKey), optNum(figureOr(r.Figure, r.Median)), ci, cv, fmt.Sprint(r.N), r.Unit}
		if withMachine {
			row = append([]string{names[r.MachineID]}, row...)
		}
		t.row(row...)
	}
	return t.flush()
}

// progress shows where the followed runs are: a bar redrawn in place on a terminal, else a line per
// change (CI logs).
type progress struct {
	out   io.Writer
	tty   bool
	names map[string]string
	start time.Time
	batch bool // several runs: each result line names its machine
	drawn bool
	last  map[string]string // run id -> the line last printed for it (plain mode)
}

const barWidth = 30

func (p *progress) draw(state map[string]*Run, order []string) {
	if !p.tty {
		return
	}
	var total, done, failed, running, ended int
	for _, id := range order {
		r := state[id]
		total += r.Progress.Total
		done += r.Progress.Done
		failed += r.Progress.Failed
		running += r.Progress.Running
		if finished(r.Status) {
			ended++
		}
	}
	fill := 0
	if total > 0 {
		fill = (done + failed) * barWidth / total
	}
	line := fmt.Sprintf("[%s%s] %d/%d items", strings.Repeat("#", fill), strings.Repeat("-", barWidth-fill),
		done+failed, total)
	if failed > 0 {
		line += fmt.Sprintf(", %d failed", failed)
	}
	if running > 0 {
		line += fmt.Sprintf(", %d running", running)
	}
	if len(order) > 1 {
		line += fmt.Sprintf(", runs %d/%d ended", ended, len(order))
	} else {
		line += ", " + state[order[0]].Status
	}
	line += fmt.Sprintf("  %s", time.Since(p.start).Round(time.Second))
	fmt.Fprintf(p.out, "\r\x1b[K%s", line)
	p.drawn = true
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.out, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) runChanged(r *Run) {
	if p.tty {
		return
	}
	line := fmt.Sprintf("run %s on %s: %s, %d/%d items done", r.ID, p.names[r.MachineID], r.Status,
		r.Progress.Done, r.Progress.Total)
	if r.Progress.Failed > 0 {
		line += fmt.Sprintf(", %d failed", r.Progress.Failed)
	}
	if p.last[r.ID] != line {
		p.last[r.ID] = line
		fmt.Fprintln(p.out, line)
	}
}

func (p *progress) result(r *Result) {
	line := fmt.Sprintf("result %s %s: %s %s", r.Kernel, paramsText(r.ParamsKey), optNum(figureOr(r.Figure, r.Median)), r.Unit)
	if p.batch {
		line += " on " + p.names[r.MachineID]
	}
	if p.tty {
		p.clear()
	}
	fmt.Fprintln(p.out, line)
}
