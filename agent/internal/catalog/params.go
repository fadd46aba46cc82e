package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/ctxbench/ctxbench/kernels/contract/go/kernelspec"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// FormatInt, FormatFloat and FormatBool write canonical strings (kernels/contract/go/kernelspec).
var (
	FormatInt   = kernelspec.FormatInt
	FormatFloat = kernelspec.FormatFloat
	FormatBool  = kernelspec.FormatBool
)

// typeNames maps ParamType to the --list type name the contract's code speaks.
var typeNames = map[agentv1.ParamType]string{
	agentv1.ParamType_PARAM_TYPE_INT:    kernelspec.TypeInt,
	agentv1.ParamType_PARAM_TYPE_FLOAT:  kernelspec.TypeFloat,
	agentv1.ParamType_PARAM_TYPE_CHOICE: kernelspec.TypeChoice,
	agentv1.ParamType_PARAM_TYPE_BOOL:   kernelspec.TypeBool,
	agentv1.ParamType_PARAM_TYPE_STRING: kernelspec.TypeString,
}

// ParseType maps a --list type name to ParamType (PARAM_TYPE_UNSPECIFIED when unknown).
func ParseType(s string) agentv1.ParamType {
	for t, name := range typeNames {
		if name == s {
			return t
		}
	}
	return agentv1.ParamType_PARAM_TYPE_UNSPECIFIED
}

// CanonicalJSON converts one typed JSON value (from --list or a kernel's result) to the canonical
// string of a parameter of type t. A JSON string is accepted for any type and checked like wire input.
func CanonicalJSON(raw json.RawMessage, t agentv1.ParamType) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("bad JSON value %s", raw)
	}
	return CanonicalValue(v, t)
}

// CanonicalValue is CanonicalJSON for a value already decoded with UseNumber (nil, string, bool or
// json.Number).
func CanonicalValue(v any, t agentv1.ParamType) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return kernelspec.Canonical(typeNames[t], x)
	case bool:
		if t == agentv1.ParamType_PARAM_TYPE_BOOL || t == agentv1.ParamType_PARAM_TYPE_CHOICE ||
			t == agentv1.ParamType_PARAM_TYPE_STRING {
			return FormatBool(x), nil
		}
		return "", fmt.Errorf("%v is not a number", x)
	case json.Number:
		return canonicalNumber(x, t)
	}
	return "", fmt.Errorf("unsupported JSON value %v", v)
}

func canonicalNumber(x json.Number, t agentv1.ParamType) (string, error) {
	switch t {
	case agentv1.ParamType_PARAM_TYPE_INT:
		if i, err := x.Int64(); err == nil {
			return FormatInt(i), nil
		}
		f, err := x.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return "", fmt.Errorf("%s is not an integer", x)
		}
		return FormatInt(int64(f)), nil
	case agentv1.ParamType_PARAM_TYPE_FLOAT:
		f, err := x.Float64()
		if err != nil {
			return "", fmt.Errorf("%s is not a number", x)
		}
		return FormatFloat(f), nil
	case agentv1.ParamType_PARAM_TYPE_BOOL:
		return "", fmt.Errorf("%s is not a bool", x)
	}
	return x.String(), nil
}

// MaxString is the longest string parameter value, in characters (kernels/contract/README.md).
const MaxString = kernelspec.MaxString

// CheckValue validates a wire value against its parameter spec and returns its canonical string.
func CheckValue(p *agentv1.ParamSpec, value string) (string, error) {
	kp := kernelspec.Param{Name: p.GetName(), Type: typeNames[p.GetType()], Choices: p.GetChoices()}
	if p.Min != nil {
		kp.Min = p.GetMin()
	}
	if p.Max != nil {
		kp.Max = p.GetMax()
	}
	v, _, err := kp.Check(value)
	return v, err
}

// Validate checks an item's kernel id and parameters against the catalog and returns the kernel's spec
// and the complete parameters (defaults filled in), all canonical strings. The error names the kernel
// and the parameter at fault.
func (c *Catalog) Validate(kernelID string, params map[string]string) (*agentv1.KernelSpec, map[string]string, error) {
	spec, ok := c.Lookup(kernelID)
	if !ok {
		return nil, nil, fmt.Errorf("kernel %q is not in this agent's catalog", kernelID)
	}
	byName := make(map[string]*agentv1.ParamSpec, len(spec.GetParams()))
	for _, p := range spec.GetParams() {
		byName[p.GetName()] = p
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad parameter reported is deterministic
	out := make(map[string]string, len(spec.GetParams()))
	for _, name := range names {
		p, ok := byName[name]
		if !ok {
			return nil, nil, fmt.Errorf("kernel %s: unknown parameter %q", kernelID, name)
		}
		v, err := CheckValue(p, params[name])
		if err != nil {
			return nil, nil, fmt.Errorf("kernel %s: parameter %s: %w", kernelID, name, err)
		}
		out[name] = v
	}
	for _, p := range spec.GetParams() {
		if _, ok := out[p.GetName()]; !ok {
			out[p.GetName()] = p.GetDefaultValue()
		}
	}
	return spec, out, nil
}
