package cli

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// table prints aligned columns: two spaces between them, a header first.
type table struct {
	w *tabwriter.Writer
}

func newTable(out io.Writer, header ...string) *table {
	t := &table{tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// num prints a figure with 4 significant digits (3.142, 77.05, 12345): enough to read a ratio or a
// median, short enough for a table.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 10000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 0.001:
		digits := 3 - int(math.Floor(math.Log10(a)))
		if digits <= 0 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', digits, 64), "0"), ".")
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func optNum(v *float64) string {
	if v == nil {
		return "-"
	}
	return num(*v)
}

// paramsText shows a parameter point as `a=1,b=x` (the server's params_key joins with `&`), `-` for none.
func paramsText(key string) string {
	if key == "" {
		return "-"
	}
	return strings.ReplaceAll(key, "&", ",")
}
