package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// Comparison is what the CLI reads of GET /compare (docs/architecture.md "Compare and share").
type Comparison struct {
	Machines []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"machines"`
	Baseline string          `json:"baseline"`
	Rows     []CompareRow    `json:"rows"`
	Warnings []CompareNotice `json:"warnings"`
}

type CompareRow struct {
	Kernel         string            `json:"kernel"`
	ParamsKey      string            `json:"params_key"`
	Unit           string            `json:"unit"`
	HigherIsBetter bool              `json:"higher_is_better"`
	Cells          map[string]Cell   `json:"cells"`
	Ratios         map[string]Ratio  `json:"ratios"`
	Warning        *string           `json:"warning"`
	Units          map[string]string `json:"units"`
}

type Cell struct {
	Median *float64 `json:"median"`
	Figure *float64 `json:"figure"` // what compare compares: the median, or p5 of short samples
	CILow  *float64 `json:"ci_low"` // of the figure
	CIHigh *float64 `json:"ci_high"`
	RunID  string   `json:"run_id"`
}

// figure is the value compare compares (a server before figures sends only the median).
func (c Cell) figure() *float64 { return figureOr(c.Figure, c.Median) }

// figureOr is a result's figure, or its median from a server that sends none.
func figureOr(figure, median *float64) *float64 {
	if figure != nil {
		return figure
	}
	return median
}

type Ratio struct {
	Ratio        *float64      `json:"ratio"`
	CILow        *float64      `json:"ci_low"`
	CIHigh       *float64      `json:"ci_high"`
	Significant  bool          `json:"significant"`
	Significance *Significance `json:"significance"`
}

type Significance struct {
	Significant bool    `json:"significant"`
	Rule        string  `json:"rule"`
	Noise       float64 `json:"noise"`
	NoiseSource string  `json:"noise_source"`
}

type CompareNotice struct {
	Message string `json:"message"`
}

// compareQuery is one GET /compare: machine ids (or sides of runs) and filters.
type compareQuery struct {
	machines []string
	kernels  []string
	baseline string
	runs     []string
	sides    string
}

func (q compareQuery) values() url.Values {
	v := url.Values{}
	if len(q.machines) > 0 {
		v.Set("machines", strings.Join(q.machines, ","))
	}
	if len(q.kernels) > 0 {
		v.Set("kernels", strings.Join(q.kernels, ","))
	}
	if q.baseline != "" {
		v.Set("baseline", q.baseline)
	}
	if len(q.runs) > 0 {
		v.Set("runs", strings.Join(q.runs, ","))
	}
	if q.sides != "" {
		v.Set("sides", q.sides)
	}
	return v
}

func fetchCompare(ctx context.Context, c *Client, q compareQuery) ([]byte, Comparison, error) {
	var cmp Comparison
	data, err := c.request(ctx, "GET", "/compare", q.values(), nil)
	if err != nil {
		return nil, cmp, err
	}
	return data, cmp, decode(data, "GET /api/v1/compare", &cmp)
}

func setupCompare(a *app, fs *flag.FlagSet) runFunc {
	var machines, kernels listFlag
	fs.Var(&machines, "machines", "machine names or ids, comma-separated (or repeated)")
	fs.Var(&kernels, "kernels", "kernel ids or family prefixes (sched.*), comma-separated; default all")
	baseline := fs.String("baseline", "", "the machine the others are divided by (default the first)")
	runs := fs.String("runs", "", "only these runs' results, comma-separated run ids")
	sides := fs.String("sides", "", "sets of runs as the columns instead of machines: label:run,run;label:run")
	asJSON := fs.Bool("json", false, "print the server's JSON answer")
	asCSV := fs.Bool("csv", false, "print CSV")
	format := fs.String("format", "table", "table, json, csv or bencher (Bencher Metric Format)")
	column := fs.String("bencher-machine", "",
		"with --format bencher: whose figures (default the first machine that is not the baseline)")
	return func(ctx context.Context, args []string) error {
		if err := noArgs("compare", args); err != nil {
			return err
		}
		f := *format
		if *asJSON {
			f = "json"
		}
		if *asCSV {
			f = "csv"
		}
		switch f {
		case "table", "json", "csv", "bencher":
		default:
			return usageErrorf("compare: --format %q: want table, json, csv or bencher", f)
		}
		refs := splitComma(machines)
		if (len(refs) == 0) == (*sides == "") {
			return usageErrorf("compare: give --machines (or --sides, not both)")
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		q := compareQuery{kernels: splitComma(kernels), runs: splitComma([]string{*runs}), sides: *sides,
			baseline: *baseline}
		if len(refs) > 0 {
			ms, err := listMachines(ctx, c)
			if err != nil {
				return err
			}
			if q.machines, err = resolveMachines(ms, refs); err != nil {
				return err
			}
			if *baseline != "" {
				b, err := resolveMachine(ms, *baseline)
				if err != nil {
					return err
				}
				q.baseline = b.ID
			}
		}
		data, cmp, err := fetchCompare(ctx, c, q)
		if err != nil {
			return err
		}
		switch f {
		case "json":
			return writeRaw(a.env, data)
		case "csv":
			return writeCSV(a.env.Stdout, cmp)
		case "bencher":
			return writeBencher(a.env.Stdout, cmp, *column)
		}
		return printComparison(a.env.Stdout, cmp)
	}
}

// others are the compared columns besides the baseline, in the answer's order.
func (cmp Comparison) others() []string {
	var out []string
	for _, m := range cmp.Machines {
		if m.ID != cmp.Baseline {
			out = append(out, m.ID)
		}
	}
	return out
}

func (cmp Comparison) name(id string) string {
	for _, m := range cmp.Machines {
		if m.ID == id {
			return m.Name
		}
	}
	return id
}

// ruleText says why a ratio is significant or not, e.g. `* ci_excludes_noise (noise 5%, runs)`.
func ruleText(r Ratio) string {
	if r.Significance == nil {
		return ""
	}
	mark := " "
	if r.Significant {
		mark = "*"
	}
	return fmt.Sprintf("%s %s (noise %.0f%%, %s)", mark, r.Significance.Rule, r.Significance.Noise*100,
		r.Significance.NoiseSource)
}

func ratioText(r Ratio, ok bool) string {
	if !ok || r.Ratio == nil {
		return "-"
	}
	s := num(*r.Ratio)
	if r.CILow != nil && r.CIHigh != nil {
		s += fmt.Sprintf(" [%s, %s]", num(*r.CILow), num(*r.CIHigh))
	}
	return s
}

func cellText(row CompareRow, id string) string {
	cell, ok := row.Cells[id]
	if !ok || cell.figure() == nil {
		return "-"
	}
	unit := row.Unit
	if u, ok := row.Units[id]; ok {
		unit = u
	}
	return num(*cell.figure()) + " " + unit
}

// printComparison: kernel, params, each machine's figure, then per other machine its ratio to the
// baseline with the CI and the rule that decided significance (`*`: significant).
func printComparison(w io.Writer, cmp Comparison) error {
	header := []string{"KERNEL", "PARAMS"}
	for _, m := range cmp.Machines {
		label := m.Name
		if m.ID == cmp.Baseline {
			label += " (baseline)"
		}
		header = append(header, label)
	}
	for _, id := range cmp.others() {
		header = append(header, cmp.name(id)+"/"+cmp.name(cmp.Baseline)+" [CI]", "SIGNIFICANT")
	}
	t := newTable(w, header...)
	for _, row := range cmp.Rows {
		cells := []string{row.Kernel, paramsText(row.ParamsKey)}
		for _, m := range cmp.Machines {
			cells = append(cells, cellText(row, m.ID))
		}
		for _, id := range cmp.others() {
			r, ok := row.Ratios[id]
			cells = append(cells, ratioText(r, ok), firstOf(ruleText(r), "-"))
		}
		t.row(cells...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(cmp.others()) > 0 && len(cmp.Rows) > 0 {
		fmt.Fprintln(w, "ratio = machine figure / baseline figure (the median, or the 5th percentile of short samples' "+
			"repetitions); * significant: its CI lies outside the "+
			"run-to-run noise band [1/(1+noise), 1+noise]")
	}
	for _, n := range cmp.Warnings {
		fmt.Fprintf(w, "warning: %s\n", n.Message)
	}
	return nil
}
