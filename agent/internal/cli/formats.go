package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

func csvNum(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// writeCSV: one line per row; per machine its figure and CI, per other machine its ratio to the
// baseline with the CI, whether it is significant and the rule.
func writeCSV(w io.Writer, cmp Comparison) error {
	cw := csv.NewWriter(w)
	header := []string{"kernel", "params", "unit"}
	for _, m := range cmp.Machines {
		header = append(header, m.Name+" figure", m.Name+" ci_low", m.Name+" ci_high")
	}
	base := cmp.name(cmp.Baseline)
	for _, id := range cmp.others() {
		p := cmp.name(id) + "/" + base
		header = append(header, p+" ratio", p+" ci_low", p+" ci_high", p+" significant", p+" rule", p+" noise")
	}
	_ = cw.Write(header)
	for _, row := range cmp.Rows {
		rec := []string{row.Kernel, row.ParamsKey, row.Unit}
		for _, m := range cmp.Machines {
			cell := row.Cells[m.ID]
			rec = append(rec, csvNum(cell.figure()), csvNum(cell.CILow), csvNum(cell.CIHigh))
		}
		for _, id := range cmp.others() {
			r, ok := row.Ratios[id]
			if !ok {
				rec = append(rec, "", "", "", "", "", "")
				continue
			}
			rule, noise := "", ""
			if r.Significance != nil {
				rule, noise = r.Significance.Rule, strconv.FormatFloat(r.Significance.Noise, 'g', -1, 64)
			}
			rec = append(rec, csvNum(r.Ratio), csvNum(r.CILow), csvNum(r.CIHigh), strconv.FormatBool(r.Significant),
				rule, noise)
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// bencherMetric is one measure of a benchmark in Bencher Metric Format.
type bencherMetric struct {
	Value      float64  `json:"value"`
	LowerValue *float64 `json:"lower_value,omitempty"`
	UpperValue *float64 `json:"upper_value,omitempty"`
}

// timeUnits are the per-op time units, by their factor to nanoseconds (Bencher's `latency` is in ns).
var timeUnits = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}

// bencherMeasure names a unit's Bencher measure and the factor its figures are scaled by: a time per
// op (ns/op, us/op, ns/goroutine) is `latency` in nanoseconds, ops/s `throughput`, any other unit its
// own measure named after it (MB/s: `mb-per-s`), which Bencher creates on first use.
func bencherMeasure(unit string) (string, float64) {
	num, den, ok := strings.Cut(strings.TrimSpace(unit), "/")
	if ok {
		den = strings.ToLower(strings.TrimSpace(den))
		if f, isTime := timeUnits[strings.TrimSpace(num)]; isTime && den != "s" {
			return "latency", f
		}
		if den == "s" && (num == "ops" || num == "op") {
			return "throughput", 1
		}
	}
	var b strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(unit, "/", " per ")) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-"), 1
}

// bencherName is a row's benchmark name: `kernel` or `kernel[a=1,b=x]`.
func bencherName(row CompareRow) string {
	if row.ParamsKey == "" {
		return row.Kernel
	}
	return row.Kernel + "[" + paramsText(row.ParamsKey) + "]"
}

// writeBencher prints one machine's figures in Bencher Metric Format (one report is one testbed):
// {"kernel[params]": {"latency": {"value": figure, "lower_value": ci_low, "upper_value": ci_high}}}.
func writeBencher(w io.Writer, cmp Comparison, which string) error {
	col := ""
	if which != "" {
		for _, m := range cmp.Machines {
			if m.ID == which || m.Name == which {
				col = m.ID
			}
		}
		if col == "" {
			return usageErrorf("compare: --bencher-machine %q is not among the compared machines", which)
		}
	} else if others := cmp.others(); len(others) > 0 {
		col = others[0]
	} else {
		col = cmp.Baseline
	}
	out := map[string]map[string]bencherMetric{}
	for _, row := range cmp.Rows {
		cell, ok := row.Cells[col]
		if !ok || cell.figure() == nil {
			continue
		}
		unit := row.Unit
		if u, ok := row.Units[col]; ok {
			unit = u
		}
		measure, f := bencherMeasure(unit)
		m := bencherMetric{Value: *cell.figure() * f}
		if cell.CILow != nil && cell.CIHigh != nil {
			lo, hi := *cell.CILow*f, *cell.CIHigh*f
			m.LowerValue, m.UpperValue = &lo, &hi
		}
		out[bencherName(row)] = map[string]bencherMetric{measure: m}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode bencher json: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
