package cli

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Item is one POST /runs item: a kernel, typed parameter values, and sweeps (a value list per name).
type Item struct {
	Kernel string           `json:"kernel"`
	Params map[string]any   `json:"params,omitempty"`
	Sweep  map[string][]any `json:"sweep,omitempty"`
}

// Run is what the CLI reads of a Run (GET /runs/{id}, the events' `run` and `end`).
type Run struct {
	ID        string    `json:"id"`
	MachineID string    `json:"machine_id"`
	BatchID   string    `json:"batch_id"`
	Status    string    `json:"status"`
	Error     *string   `json:"error"`
	Items     []RunItem `json:"items"`
	Progress  Progress  `json:"progress"`
}

type RunItem struct {
	Index  int            `json:"index"`
	Kernel string         `json:"kernel"`
	Params map[string]any `json:"params"`
	State  string         `json:"state"`
	Error  *string        `json:"error"`
}

type Progress struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Running int `json:"running"`
}

// finished reports whether a run status is terminal.
func finished(status string) bool {
	return status == "succeeded" || status == "failed" || status == "cancelled"
}

func setupRun(a *app, fs *flag.FlagSet) runFunc {
	var machines, kernels listFlag
	fs.Var(&machines, "machine", "machine name or id; repeat (or a comma list) for a batch, one run each")
	fs.Var(&kernels, "kernel", "kernel id[:param=value,...]; a value a|b|c sweeps; repeat for more items")
	profile := fs.String("profile", "", "quick, default or thorough (the server's default when omitted)")
	reps := fs.Int("repetitions", 0, "repetitions per item (overrides the profile)")
	minTime := fs.Float64("min-time", 0, "seconds of timed work per repetition (overrides the profile)")
	follow := fs.Bool("follow", false, "follow the run's events until it ends, then print its results")
	asJSON := fs.Bool("json", false, "print the server's JSON answer (with --follow: the results)")
	return func(ctx context.Context, args []string) error {
		if err := noArgs("run", args); err != nil {
			return err
		}
		refs := splitComma(machines)
		if len(refs) == 0 || len(kernels) == 0 {
			return usageErrorf("run: give --machine and at least one --kernel (see 'ctxbench run -h')")
		}
		switch *profile {
		case "", "quick", "default", "thorough":
		default:
			return usageErrorf("run: --profile %q: want quick, default or thorough", *profile)
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		ms, err := listMachines(ctx, c)
		if err != nil {
			return err
		}
		ids, err := resolveMachines(ms, refs)
		if err != nil {
			return err
		}
		ks, err := listKernels(ctx, c)
		if err != nil {
			return err
		}
		items, err := parseItems(kernels, ks)
		if err != nil {
			return err
		}
		q := url.Values{}
		if len(ids) > 1 {
			q.Set("items", "false") // a batch's answer without every run's items (REST "light form")
		}
		data, err := c.request(ctx, "POST", "/runs", q, runBody(ids, items, *profile, *reps, *minTime))
		if err != nil {
			return err
		}
		runs, batch, err := decodePosted(data)
		if err != nil {
			return err
		}
		if !*follow {
			if *asJSON {
				return writeRaw(a.env, data)
			}
			printPosted(a.env, runs, batch, machineNames(ms))
			return nil
		}
		return followRuns(ctx, a.env, c, runs, machineNames(ms), *asJSON)
	}
}

func parseItems(specs []string, ks []Kernel) ([]Item, error) {
	items := make([]Item, 0, len(specs))
	for _, spec := range specs {
		it, err := parseItem(spec, ks)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// runBody is POST /runs' body: one machine_id, or machine_ids for a batch; overrides only when given.
func runBody(ids []string, items []Item, profile string, reps int, minTime float64) map[string]any {
	body := map[string]any{"items": items}
	if len(ids) == 1 {
		body["machine_id"] = ids[0]
	} else {
		body["machine_ids"] = ids
	}
	if profile != "" {
		body["profile"] = profile
	}
	if reps > 0 {
		body["repetitions"] = reps
	}
	if minTime > 0 {
		body["min_time_s"] = minTime
	}
	return body
}

func printPosted(env Env, runs []Run, batch string, names map[string]string) {
	if batch != "" {
		fmt.Fprintf(env.Stdout, "batch %s\n", batch)
	}
	for _, r := range runs {
		fmt.Fprintf(env.Stdout, "run %s on %s: %s\n", r.ID, names[r.MachineID], r.Status)
	}
}

func machineNames(ms []Machine) map[string]string {
	out := make(map[string]string, len(ms))
	for _, m := range ms {
		out[m.ID] = m.Name
	}
	return out
}

// decodePosted reads POST /runs' answer: a Run, or `{batch_id, runs}` for several machines.
func decodePosted(data []byte) ([]Run, string, error) {
	var batch struct {
		BatchID string `json:"batch_id"`
		Runs    []Run  `json:"runs"`
	}
	if err := decode(data, "POST /api/v1/runs", &batch); err != nil {
		return nil, "", err
	}
	if batch.Runs != nil {
		return batch.Runs, batch.BatchID, nil
	}
	var r Run
	if err := decode(data, "POST /api/v1/runs", &r); err != nil {
		return nil, "", err
	}
	if r.ID == "" {
		return nil, "", serverErrorf("POST /api/v1/runs: the answer names no run")
	}
	return []Run{r}, "", nil
}

// parseItem reads `kernel[:name=value,name=v1|v2,...]`. Values are typed by the kernel's declaration
// (REST takes typed JSON values); a parameter the catalog does not declare is sent by its look, and the
// server names it if it is wrong.
func parseItem(spec string, ks []Kernel) (Item, error) {
	id, rest, hasParams := strings.Cut(spec, ":")
	id = strings.TrimSpace(id)
	if id == "" {
		return Item{}, usageErrorf("--kernel %q: no kernel id", spec)
	}
	it := Item{Kernel: id}
	if !hasParams {
		return it, nil
	}
	decl := map[string]Param{}
	for _, k := range ks {
		if k.ID == id || contains(k.Aliases, id) {
			for _, p := range k.Params {
				decl[p.Name] = p
			}
		}
	}
	for _, part := range strings.Split(rest, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return Item{}, usageErrorf("--kernel %q: %q is not name=value", spec, part)
		}
		values := strings.Split(value, "|")
		typed := make([]any, len(values))
		for i, v := range values {
			tv, err := typedValue(v, decl[name])
			if err != nil {
				return Item{}, usageErrorf("--kernel %q: parameter %s: %v", spec, name, err)
			}
			typed[i] = tv
		}
		if len(typed) > 1 {
			if it.Sweep == nil {
				it.Sweep = map[string][]any{}
			}
			it.Sweep[name] = typed
		} else {
			if it.Params == nil {
				it.Params = map[string]any{}
			}
			it.Params[name] = typed[0]
		}
	}
	return it, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// typedValue converts a command-line value to the JSON type its declaration asks for.
func typedValue(v string, p Param) (any, error) {
	switch p.Type {
	case "int":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return n, nil
	case "float":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case "bool":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	case "choice":
		if len(p.Choices) > 0 && !contains(p.Choices, v) {
			return nil, fmt.Errorf("%q is not one of %s", v, strings.Join(p.Choices, ", "))
		}
		return v, nil
	case "string":
		return v, nil
	}
	// Undeclared: an integer, a number or a boolean when it reads as one, else a string.
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, nil
	}
	if v == "true" || v == "false" {
		return v == "true", nil
	}
	return v, nil
}
