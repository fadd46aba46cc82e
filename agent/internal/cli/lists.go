package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Machine is what the CLI reads of GET /machines (the answer holds more).
type Machine struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	AgentName string          `json:"agent_name"`
	Hostname  string          `json:"hostname"`
	Online    bool            `json:"online"`
	Status    string          `json:"status"`
	Kernels   []string        `json:"kernels"`
	Labels    json.RawMessage `json:"labels"`
}

// Kernel is what the CLI reads of GET /kernels.
type Kernel struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Family   string   `json:"family"`
	Unit     string   `json:"unit"`
	Params   []Param  `json:"params"`
	Machines []string `json:"machines"`
	Aliases  []string `json:"aliases"`
}

// Param is a kernel parameter's declaration: its type decides how a value typed on the command line
// is sent (REST takes typed JSON values).
type Param struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Choices []string `json:"choices"`
}

func setupMachines(a *app, fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print the server's JSON answer")
	selector := fs.String("selector", "", "only machines whose labels match, e.g. env=prod,rack (the server checks it)")
	return func(ctx context.Context, args []string) error {
		if err := noArgs("machines", args); err != nil {
			return err
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		var q url.Values
		if *selector != "" {
			q = url.Values{"selector": {*selector}}
		}
		data, err := c.request(ctx, "GET", "/machines", q, nil)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeRaw(a.env, data)
		}
		var ms []Machine
		if err := decode(data, "GET /api/v1/machines", &ms); err != nil {
			return err
		}
		return printMachines(a.env, ms)
	}
}

func printMachines(env Env, ms []Machine) error {
	withLabels := false
	for _, m := range ms {
		withLabels = withLabels || labelsText(m.Labels) != ""
	}
	header := []string{"ID", "NAME", "ONLINE", "KERNELS"}
	if withLabels {
		header = append(header, "LABELS")
	}
	t := newTable(env.Stdout, header...)
	for _, m := range ms {
		online := "no"
		if m.Online {
			online = "yes"
		}
		if m.Status == "pending" {
			online += " (pending)"
		}
		row := []string{m.ID, m.Name, online, strconv.Itoa(len(m.Kernels))}
		if withLabels {
			row = append(row, firstOf(labelsText(m.Labels), "-"))
		}
		t.row(row...)
	}
	return t.flush()
}

// labelsText shows labels as `k=v,k=v`, whatever shape the server gives them (an object, a list).
func labelsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			if s, ok := obj[k].(string); ok && s == "" {
				parts = append(parts, k)
			} else {
				parts = append(parts, fmt.Sprintf("%s=%v", k, obj[k]))
			}
		}
		return strings.Join(parts, ",")
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ",")
	}
	return string(raw)
}

func setupKernels(a *app, fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print the server's JSON answer")
	return func(ctx context.Context, args []string) error {
		if err := noArgs("kernels", args); err != nil {
			return err
		}
		c, err := a.connect()
		if err != nil {
			return err
		}
		data, err := c.request(ctx, "GET", "/kernels", nil, nil)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeRaw(a.env, data)
		}
		var ks []Kernel
		if err := decode(data, "GET /api/v1/kernels", &ks); err != nil {
			return err
		}
		t := newTable(a.env.Stdout, "ID", "FAMILY", "UNIT", "TITLE")
		for _, k := range ks {
			t.row(k.ID, k.Family, k.Unit, k.Title)
		}
		return t.flush()
	}
}

func writeRaw(env Env, data []byte) error {
	if _, err := env.Stdout.Write(data); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

func listMachines(ctx context.Context, c *Client) ([]Machine, error) {
	var ms []Machine
	return ms, c.getJSON(ctx, "/machines", nil, &ms)
}

func listKernels(ctx context.Context, c *Client) ([]Kernel, error) {
	var ks []Kernel
	return ks, c.getJSON(ctx, "/kernels", nil, &ks)
}

// resolveMachine finds a machine by id, else by its name, agent name or hostname (one match only).
func resolveMachine(ms []Machine, ref string) (Machine, error) {
	for _, m := range ms {
		if m.ID == ref {
			return m, nil
		}
	}
	for _, field := range []func(Machine) string{
		func(m Machine) string { return m.Name },
		func(m Machine) string { return m.AgentName },
		func(m Machine) string { return m.Hostname },
	} {
		var hits []Machine
		for _, m := range ms {
			if field(m) == ref {
				hits = append(hits, m)
			}
		}
		switch len(hits) {
		case 0:
			continue
		case 1:
			return hits[0], nil
		default:
			ids := make([]string, len(hits))
			for i, m := range hits {
				ids[i] = m.ID
			}
			return Machine{}, usageErrorf("machine %q is ambiguous: %s (give an id)", ref, strings.Join(ids, ", "))
		}
	}
	return Machine{}, usageErrorf("unknown machine %q (see 'ctxbench machines')", ref)
}

// resolveMachines resolves names or ids to ids, in order.
func resolveMachines(ms []Machine, refs []string) ([]string, error) {
	ids := make([]string, 0, len(refs))
	for _, r := range refs {
		m, err := resolveMachine(ms, r)
		if err != nil {
			return nil, err
		}
		ids = append(ids, m.ID)
	}
	return ids, nil
}
