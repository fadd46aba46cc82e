package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
)

// Side labels of a gate's compare (GET /compare?sides=...).
const (
	sideBaseline  = "baseline"
	sideCandidate = "candidate"
)

func setupGate(a *app, fs *flag.FlagSet) runFunc {
	run := fs.String("run", "", "the run to judge (a comma list: several runs of one side)")
	baseRun := fs.String("baseline-run", "", "the run it is judged against (a comma list: several)")
	machine := fs.String("machine", "", "judge this machine's newest succeeded run ...")
	baseMachine := fs.String("baseline-machine", "",
		"... against this machine's newest (the same machine: its run before the newest)")
	var kernels listFlag
	fs.Var(&kernels, "kernels", "only these kernel ids or prefixes (sched.*), comma-separated")
	return func(ctx context.Context, args []string) error {
		if err := noArgs("gate", args); err != nil {
			return err
		}
		byRun := *run != "" || *baseRun != ""
		byMachine := *machine != "" || *baseMachine != ""
		switch {
		case byRun && byMachine:
			return usageErrorf("gate: give --run/--baseline-run or --machine/--baseline-machine, not both")
		case byRun && (*run == "" || *baseRun == ""):
			return usageErrorf("gate: give both --run and --baseline-run")
		case byMachine && (*machine == "" || *baseMachine == ""):
			return usageErrorf("gate: give both --machine and --baseline-machine")
		case !byRun && !byMachine:
			return usageErrorf("gate: give --run and --baseline-run, or --machine and --baseline-machine")
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		q := compareQuery{kernels: splitComma(kernels)}
		cand := sideCandidate
		if byRun {
			same, err := sidesOfRuns(ctx, c, &q, splitComma([]string{*run}), splitComma([]string{*baseRun}))
			if err != nil || same {
				if same {
					fmt.Fprintf(a.env.Stdout, "gate: run %s is its own baseline: every ratio is 1, nothing is slower\n", *run)
				}
				return err
			}
		} else if cand, err = gateMachines(ctx, c, &q, *machine, *baseMachine); err != nil {
			return err
		}
		_, cmp, err := fetchCompare(ctx, c, q)
		if err != nil {
			return err
		}
		v := judge(cmp, cand)
		v.print(a.env.Stdout, cmp, cand, gateTitle(cmp, q, cand))
		switch {
		case v.compared == 0:
			return usageErrorf("gate: nothing compared: no kernel point has a result on both sides")
		case len(v.slower) > 0:
			return &failure{ExitFailed}
		}
		return nil
	}
}

// sidesOfRuns sets q to compare two sets of runs; same: both name the same runs (nothing to compare,
// each run is checked to exist).
func sidesOfRuns(ctx context.Context, c *Client, q *compareQuery, runs, base []string) (bool, error) {
	key := func(ids []string) string {
		s := append([]string(nil), ids...)
		sort.Strings(s)
		return strings.Join(s, ",")
	}
	if key(runs) == key(base) {
		for _, id := range runs {
			var r Run
			if err := c.getJSON(ctx, "/runs/"+url.PathEscape(id), nil, &r); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	for _, r := range runs {
		if contains(base, r) {
			return false, usageErrorf("gate: run %s is on both sides", r)
		}
	}
	q.sides = sideBaseline + ":" + strings.Join(base, ",") + ";" + sideCandidate + ":" + strings.Join(runs, ",")
	q.baseline = sideBaseline
	return false, nil
}

// gateMachines sets q to compare two machines' newest succeeded runs (one machine: its newest against
// the one before) and returns the candidate's column id.
func gateMachines(ctx context.Context, c *Client, q *compareQuery, machine, baseMachine string) (string, error) {
	ms, err := listMachines(ctx, c)
	if err != nil {
		return "", err
	}
	m, err := resolveMachine(ms, machine)
	if err != nil {
		return "", err
	}
	b, err := resolveMachine(ms, baseMachine)
	if err != nil {
		return "", err
	}
	if m.ID == b.ID {
		runs, err := newestRuns(ctx, c, m.ID, 2)
		if err != nil {
			return "", err
		}
		if len(runs) < 2 {
			return "", usageErrorf("gate: machine %s has %d succeeded run(s): two are needed to judge it "+
				"against itself", m.Name, len(runs))
		}
		_, err = sidesOfRuns(ctx, c, q, []string{runs[0].ID}, []string{runs[1].ID})
		return sideCandidate, err
	}
	var ids []string
	for _, id := range []string{m.ID, b.ID} {
		runs, err := newestRuns(ctx, c, id, 1)
		if err != nil {
			return "", err
		}
		if len(runs) == 0 {
			return "", usageErrorf("gate: machine %s has no succeeded run", machineNames(ms)[id])
		}
		ids = append(ids, runs[0].ID)
	}
	q.machines, q.baseline, q.runs = []string{b.ID, m.ID}, b.ID, ids
	return m.ID, nil
}

func newestRuns(ctx context.Context, c *Client, machineID string, n int) ([]Run, error) {
	q := url.Values{"machine_id": {machineID}, "status": {"succeeded"}, "limit": {fmt.Sprint(n)},
		"items": {"false"}}
	var runs []Run
	return runs, c.getJSON(ctx, "/runs", q, &runs)
}

// verdict is a gate's reading of a comparison: the server's significance decision, per row.
type verdict struct {
	compared    int
	slower      []CompareRow
	faster      int
	notCompared []CompareRow
}

// slower: significant (by the server's rule) and worse: a ratio above 1 for a cost, below 1 for a
// throughput (higher_is_better).
func isSlower(row CompareRow, r Ratio) bool {
	if !r.Significant || r.Ratio == nil {
		return false
	}
	if row.HigherIsBetter {
		return *r.Ratio < 1
	}
	return *r.Ratio > 1
}

func judge(cmp Comparison, cand string) verdict {
	var v verdict
	for _, row := range cmp.Rows {
		r, ok := row.Ratios[cand]
		_, hasBase := row.Cells[cmp.Baseline]
		if !ok || r.Ratio == nil || !hasBase {
			v.notCompared = append(v.notCompared, row)
			continue
		}
		v.compared++
		switch {
		case isSlower(row, r):
			v.slower = append(v.slower, row)
		case r.Significant:
			v.faster++
		}
	}
	return v
}

// gateTitle names what was judged against what: machines, or the runs of each side.
func gateTitle(cmp Comparison, q compareQuery, cand string) string {
	if q.sides == "" {
		return cmp.name(cand) + " against " + cmp.name(cmp.Baseline)
	}
	runs := map[string]string{}
	for _, side := range strings.Split(q.sides, ";") {
		label, ids, _ := strings.Cut(side, ":")
		runs[label] = ids
	}
	return fmt.Sprintf("run %s against run %s", runs[sideCandidate], runs[sideBaseline])
}

func (v verdict) print(w io.Writer, cmp Comparison, cand, title string) {
	for _, row := range v.slower {
		r := row.Ratios[cand]
		dir := "higher is slower"
		if row.HigherIsBetter {
			dir = "lower is slower: " + row.Unit + " is a throughput"
		}
		fmt.Fprintf(w, "SLOWER %s %s: %s -> %s, ratio %s (%s)\n", row.Kernel, paramsText(row.ParamsKey),
			cellText(row, cmp.Baseline), cellText(row, cand), ratioText(r, true), dir)
		if s := r.Significance; s != nil {
			lo, hi := 1/(1+s.Noise), 1+s.Noise
			fmt.Fprintf(w, "  rule %s: the CI lies outside the noise band [%s, %s] (noise %.1f%%, from %s)\n",
				s.Rule, num(lo), num(hi), s.Noise*100, s.NoiseSource)
		}
	}
	fmt.Fprintf(w, "gate: %s: %d compared, %d significantly slower, %d significantly faster, %d not compared\n",
		title, v.compared, len(v.slower), v.faster, len(v.notCompared))
	for _, n := range cmp.Warnings {
		fmt.Fprintf(w, "warning: %s\n", n.Message)
	}
}
