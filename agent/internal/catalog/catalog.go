// Package catalog builds the agent's kernel catalog from the `--list` output of every kernel
// executable, and validates run items against it: the agent never runs a kernel id or parameter value
// its catalog does not allow.
package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxbench/ctxbench/kernels/contract/go/kernelspec"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/process"
)

// ListTimeout bounds one executable's `--list`.
const ListTimeout = 30 * time.Second

const maxListOutput = 16 << 20

// Catalog is the set of kernels the agent can run. Immutable once built.
type Catalog struct {
	kernels []*agentv1.KernelSpec
	byID    map[string]*agentv1.KernelSpec
}

// New builds a catalog from specs; the first spec of an id wins.
func New(specs []*agentv1.KernelSpec) *Catalog {
	c := &Catalog{byID: map[string]*agentv1.KernelSpec{}}
	for _, s := range specs {
		if _, dup := c.byID[s.GetId()]; dup {
			continue
		}
		c.byID[s.GetId()] = s
		c.kernels = append(c.kernels, s)
	}
	return c
}

// Kernels returns the specs in catalog order (executable file name, then list order).
func (c *Catalog) Kernels() []*agentv1.KernelSpec { return c.kernels }

// Lookup finds a kernel by id.
func (c *Catalog) Lookup(id string) (*agentv1.KernelSpec, bool) {
	s, ok := c.byID[id]
	return s, ok
}

// Load runs `<exe> --list` on every regular executable file in dir, in file-name order. An executable
// that fails or prints something unreadable is logged and skipped; only an unreadable dir is an error.
func Load(ctx context.Context, dir string, log *slog.Logger) (*Catalog, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read kernels dir %s: %w", dir, err)
	}
	var specs []*agentv1.KernelSpec
	owner := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		st, err := os.Stat(path) // follows symlinks on purpose
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		listed, err := listExecutable(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Error("kernel executable skipped: --list failed", "executable", path, "err", err)
			continue
		}
		n := 0
		for _, s := range listed {
			s.Executable = name
			if first, dup := owner[s.GetId()]; dup {
				log.Warn("kernel listed twice; keeping the first", "kernel", s.GetId(), "kept", first, "ignored", name)
				continue
			}
			owner[s.GetId()] = name
			specs = append(specs, s)
			n++
		}
		log.Info("kernel executable listed", "executable", name, "kernels", n)
	}
	return New(specs), nil
}

func listExecutable(ctx context.Context, path string) ([]*agentv1.KernelSpec, error) {
	res := process.Run(ctx, process.Spec{
		Path: path, Args: []string{"--list"}, Env: KernelEnv(),
		Timeout: ListTimeout, Grace: 0, MaxStdout: maxListOutput, StderrTail: 64 << 10,
	})
	switch {
	case res.Interrupted:
		return nil, ctx.Err()
	case res.StartErr != nil || res.TimedOut || res.ExitCode != 0:
		return nil, fmt.Errorf("%s: %s", res.Describe(ListTimeout), process.LastLine(res.StderrTail))
	case res.StdoutOver:
		return nil, fmt.Errorf("--list output exceeds %d bytes", maxListOutput)
	}
	return ParseList(res.Stdout)
}

// KernelEnv is the environment kernel executables run with: the agent's, less its secrets.
func KernelEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CTXBENCH_AGENT_TOKEN") || strings.HasPrefix(kv, "CTXBENCH_AGENT_JOIN_TOKEN") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// ParseList converts `--list` JSON (DESIGN 3.1, read into the contract's structs) into KernelSpecs
// with canonical-string values. Executable is left for the caller to set.
func ParseList(data []byte) ([]*agentv1.KernelSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var listed []kernelspec.Kernel
	if err := dec.Decode(&listed); err != nil {
		return nil, fmt.Errorf("parse --list JSON: %w", err)
	}
	out := make([]*agentv1.KernelSpec, 0, len(listed))
	for i := range listed {
		s, err := kernelSpec(&listed[i])
		if err != nil {
			return nil, fmt.Errorf("--list kernel #%d %q: %w", i, listed[i].ID, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func kernelSpec(k *kernelspec.Kernel) (*agentv1.KernelSpec, error) {
	if k.ID == "" {
		return nil, errors.New("missing id")
	}
	s := &agentv1.KernelSpec{
		Id: k.ID, Title: k.Title, Family: k.Family, Unit: k.Unit, Description: k.Description,
	}
	seen := map[string]bool{}
	for i := range k.Params {
		p, err := paramSpec(&k.Params[i])
		if err != nil {
			return nil, fmt.Errorf("param %q: %w", k.Params[i].Name, err)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("param %q listed twice", p.Name)
		}
		seen[p.Name] = true
		s.Params = append(s.Params, p)
	}
	if k.SeedReference != nil {
		ref, err := seedReference(k.SeedReference, s.Params)
		if err != nil {
			return nil, fmt.Errorf("seed_reference: %w", err)
		}
		s.SeedReference = ref
	}
	return s, nil
}

func paramSpec(lp *kernelspec.Param) (*agentv1.ParamSpec, error) {
	if lp.Name == "" {
		return nil, errors.New("missing name")
	}
	t := ParseType(lp.Type)
	if t == agentv1.ParamType_PARAM_TYPE_UNSPECIFIED {
		return nil, fmt.Errorf("unknown type %q", lp.Type)
	}
	p := &agentv1.ParamSpec{Name: lp.Name, Type: t, Choices: lp.Choices, Help: lp.Help}
	var err error
	if p.Min, err = bound(lp.Min); err != nil {
		return nil, fmt.Errorf("min: %w", err)
	}
	if p.Max, err = bound(lp.Max); err != nil {
		return nil, fmt.Errorf("max: %w", err)
	}
	if t == agentv1.ParamType_PARAM_TYPE_CHOICE && len(p.Choices) == 0 {
		return nil, errors.New("choice parameter without choices")
	}
	if p.DefaultValue, err = CanonicalValue(lp.Default, t); err != nil {
		return nil, fmt.Errorf("default: %w", err)
	}
	for _, raw := range lp.Sweep {
		v, err := CanonicalValue(raw, t)
		if err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		p.Sweep = append(p.Sweep, v)
	}
	return p, nil
}

// bound reads a min or max: null or a number.
func bound(v any) (*float64, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s is not a number", x)
		}
		return &f, nil
	}
	return nil, fmt.Errorf("%v is not a number", v)
}

func seedReference(ls *kernelspec.SeedReference, params []*agentv1.ParamSpec) (*agentv1.SeedReference, error) {
	ref := &agentv1.SeedReference{Seed: ls.Seed, Value: ls.Value, Unit: ls.Unit, Machine: ls.Machine, Note: ls.Note}
	if len(ls.Params) > 0 {
		types := map[string]string{}
		for _, p := range params {
			types[p.GetName()] = typeNames[p.GetType()]
		}
		ref.Params = map[string]string{}
		for name, text := range ls.Params {
			t, ok := types[name]
			if !ok {
				t = kernelspec.TypeString
			}
			v, err := kernelspec.Canonical(t, text)
			if err != nil {
				return nil, fmt.Errorf("params %s: %w", name, err)
			}
			ref.Params[name] = v
		}
	}
	return ref, nil
}
