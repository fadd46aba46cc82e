package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// FormatInt is the canonical string of an int parameter: plain decimal.
func FormatInt(v int64) string { return strconv.FormatInt(v, 10) }

// FormatFloat is the canonical string of a float parameter: the shortest decimal that round-trips,
// written as Python's repr writes it ("0.5", "1.0", "1e-05", "1e+16"), because the server that
// converts typed values to canonical strings is Python and both sides must agree byte for byte.
func FormatFloat(v float64) string {
	abs := math.Abs(v)
	if abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// FormatBool is the canonical string of a bool parameter.
func FormatBool(v bool) string { return strconv.FormatBool(v) }

// ParseType maps a --list type name to ParamType (PARAM_TYPE_UNSPECIFIED when unknown).
func ParseType(s string) agentv1.ParamType {
	switch s {
	case "int":
		return agentv1.ParamType_PARAM_TYPE_INT
	case "float":
		return agentv1.ParamType_PARAM_TYPE_FLOAT
	case "choice":
		return agentv1.ParamType_PARAM_TYPE_CHOICE
	case "bool":
		return agentv1.ParamType_PARAM_TYPE_BOOL
	case "string":
		return agentv1.ParamType_PARAM_TYPE_STRING
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
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return canonicalString(x, t)
	case bool:
		if t == agentv1.ParamType_PARAM_TYPE_BOOL || t == agentv1.ParamType_PARAM_TYPE_CHOICE ||
			t == agentv1.ParamType_PARAM_TYPE_STRING {
			return FormatBool(x), nil
		}
		return "", fmt.Errorf("%v is not a number", x)
	case json.Number:
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
		default:
			return x.String(), nil
		}
	}
	return "", fmt.Errorf("unsupported JSON value %s", raw)
}

// MaxString is the longest string parameter value, in characters (kernels/contract/README.md).
const MaxString = 4096

// isDecimalInt reports whether s is a wire int: an optional '-' and ASCII digits, nothing else (no '+',
// spaces, underscores or base prefix; kernels/contract/README.md "Parameter values").
func isDecimalInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDecimalFloat reports whether s is a wire float: -?(digits[.digits]|.digits)([eE][+-]?digits)?,
// nothing else (no '+', spaces, underscores, hex, inf or nan).
func isDecimalFloat(s string) bool {
	s = strings.TrimPrefix(s, "-")
	i, n := 0, len(s)
	digits := func() int {
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	mantissa := digits()
	if i < n && s[i] == '.' {
		i++
		mantissa += digits()
	}
	if mantissa == 0 {
		return false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == n
}

// canonicalString parses a wire string of type t and returns its canonical form.
func canonicalString(s string, t agentv1.ParamType) (string, error) {
	switch t {
	case agentv1.ParamType_PARAM_TYPE_INT:
		if !isDecimalInt(s) {
			return "", fmt.Errorf("%q is not an integer", s)
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return "", fmt.Errorf("%q is out of the 64-bit integer range", s)
		}
		return FormatInt(i), nil
	case agentv1.ParamType_PARAM_TYPE_FLOAT:
		f, err := strconv.ParseFloat(s, 64)
		if !isDecimalFloat(s) || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("%q is not a finite number", s)
		}
		return FormatFloat(f), nil
	case agentv1.ParamType_PARAM_TYPE_BOOL:
		switch s {
		case "true", "false":
			return s, nil
		}
		return "", fmt.Errorf("%q is not a bool (want true or false)", s)
	}
	return s, nil
}

// CheckValue validates a wire value against its parameter spec and returns its canonical string.
func CheckValue(p *agentv1.ParamSpec, value string) (string, error) {
	v, err := canonicalString(value, p.GetType())
	if err != nil {
		return "", err
	}
	switch p.GetType() {
	case agentv1.ParamType_PARAM_TYPE_INT, agentv1.ParamType_PARAM_TYPE_FLOAT:
		f, _ := strconv.ParseFloat(v, 64)
		if p.Min != nil && f < p.GetMin() {
			return "", fmt.Errorf("%s is below the minimum %s", v, formatBound(p.GetMin()))
		}
		if p.Max != nil && f > p.GetMax() {
			return "", fmt.Errorf("%s is above the maximum %s", v, formatBound(p.GetMax()))
		}
	case agentv1.ParamType_PARAM_TYPE_CHOICE:
		for _, c := range p.GetChoices() {
			if c == v {
				return v, nil
			}
		}
		return "", fmt.Errorf("%q is not one of %s", v, strings.Join(p.GetChoices(), ", "))
	case agentv1.ParamType_PARAM_TYPE_STRING:
		if n := utf8.RuneCountInString(v); n > MaxString {
			return "", fmt.Errorf("string of %d characters is longer than %d", n, MaxString)
		}
		if strings.ContainsRune(v, 0) {
			return "", fmt.Errorf("string contains a NUL character")
		}
	case agentv1.ParamType_PARAM_TYPE_BOOL:
	default:
		return "", fmt.Errorf("parameter has no valid type")
	}
	return v, nil
}

func formatBound(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return FormatInt(int64(f))
	}
	return FormatFloat(f)
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
