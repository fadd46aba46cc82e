// Package spec describes kernels as `--list` prints them (DESIGN 3.1) and parses parameter values from
// their canonical strings (docs/architecture.md, "Parameter values: canonical strings").
package spec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxString is the longest string parameter value, in characters (kernels/contract/README.md).
const MaxString = 4096

// Parameter types, as `--list` names them.
const (
	TypeInt    = "int"
	TypeFloat  = "float"
	TypeChoice = "choice"
	TypeBool   = "bool"
	TypeString = "string"
)

// Param is one typed kernel parameter. Default, Min, Max and Sweep hold int64 for int parameters,
// float64 for float, bool for bool and string for choice and string. Every key is always printed, as
// the other kernel executables do: min and max are null where they do not apply, sweep and choices
// empty lists.
type Param struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default any      `json:"default"`
	Min     any      `json:"min"`
	Max     any      `json:"max"`
	Sweep   []any    `json:"sweep"`
	Choices []string `json:"choices"`
	Help    string   `json:"help"`
}

// SeedReference is the figure a seed write-up (../shared/seeds/NNN_*.txt) measured for the same thing.
// Params holds canonical strings, like the proto's map<string, string>.
type SeedReference struct {
	Seed    string            `json:"seed"`
	Value   float64           `json:"value"`
	Unit    string            `json:"unit"`
	Machine string            `json:"machine"`
	Params  map[string]string `json:"params,omitempty"`
	Note    string            `json:"note,omitempty"`
}

// Kernel is one kernel spec, one element of the `--list` array.
type Kernel struct {
	ID            string         `json:"id"`
	Title         string         `json:"title"`
	Family        string         `json:"family"`
	Unit          string         `json:"unit"`
	Description   string         `json:"description"`
	Params        []Param        `json:"params"`
	SeedReference *SeedReference `json:"seed_reference,omitempty"`
}

// Values are typed parameter values by name (int64, float64, bool or string).
type Values map[string]any

// Int returns an int parameter's value; it panics when the kernel's own spec lacks it (a programming error).
func (v Values) Int(name string) int64 { return v[name].(int64) }

// String returns a choice or string parameter's value.
func (v Values) String(name string) string { return v[name].(string) }

// IntParam builds an int parameter with its default sweep.
func IntParam(name string, def, min, max int64, sweep []int64, help string) Param {
	p := Param{Name: name, Type: TypeInt, Default: def, Min: min, Max: max, Sweep: []any{}, Choices: []string{},
		Help: help}
	for _, s := range sweep {
		p.Sweep = append(p.Sweep, s)
	}
	return p
}

// ChoiceParam builds a choice parameter.
func ChoiceParam(name, def string, choices []string, help string) Param {
	return Param{Name: name, Type: TypeChoice, Default: def, Sweep: []any{}, Choices: choices, Help: help}
}

// Parse converts a canonical string into the parameter's typed value, checking its bounds or choices.
// The error is one line naming the parameter and what is wrong.
func (p Param) Parse(text string) (any, error) {
	switch p.Type {
	case TypeInt:
		n, err := strconv.ParseInt(text, 10, 64)
		if !isDecimalInt(text) || err != nil {
			return nil, fmt.Errorf("parameter %s: %q is not an integer", p.Name, text)
		}
		if lo, ok := p.Min.(int64); ok && n < lo {
			return nil, fmt.Errorf("parameter %s=%d is out of range [%v, %v]", p.Name, n, p.Min, p.Max)
		}
		if hi, ok := p.Max.(int64); ok && n > hi {
			return nil, fmt.Errorf("parameter %s=%d is out of range [%v, %v]", p.Name, n, p.Min, p.Max)
		}
		return n, nil
	case TypeFloat:
		f, err := strconv.ParseFloat(text, 64)
		if !isDecimalFloat(text) || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("parameter %s: %q is not a finite number", p.Name, text)
		}
		if lo, ok := p.Min.(float64); ok && f < lo {
			return nil, fmt.Errorf("parameter %s=%s is out of range [%v, %v]", p.Name, text, p.Min, p.Max)
		}
		if hi, ok := p.Max.(float64); ok && f > hi {
			return nil, fmt.Errorf("parameter %s=%s is out of range [%v, %v]", p.Name, text, p.Min, p.Max)
		}
		return f, nil
	case TypeBool:
		switch text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("parameter %s: %q is not true or false", p.Name, text)
	case TypeChoice:
		for _, c := range p.Choices {
			if c == text {
				return text, nil
			}
		}
		return nil, fmt.Errorf("parameter %s: %q is not one of %v", p.Name, text, p.Choices)
	case TypeString:
		if n := utf8.RuneCountInString(text); n > MaxString {
			return nil, fmt.Errorf("parameter %s: %d characters, more than %d", p.Name, n, MaxString)
		}
		if strings.ContainsRune(text, 0) {
			return nil, fmt.Errorf("parameter %s contains a NUL character", p.Name)
		}
		return text, nil
	}
	return nil, fmt.Errorf("parameter %s has unknown type %q", p.Name, p.Type)
}

// Resolve parses the given canonical strings against the kernel's params and fills in defaults.
func (k Kernel) Resolve(given map[string]string) (Values, error) {
	known := make(map[string]bool, len(k.Params))
	for _, p := range k.Params {
		known[p.Name] = true
	}
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	sort.Strings(names) // the first unknown name in order, so the message is stable
	for _, name := range names {
		if !known[name] {
			return nil, fmt.Errorf("kernel %s has no parameter %q", k.ID, name)
		}
	}
	values := make(Values, len(k.Params))
	for _, p := range k.Params {
		text, ok := given[p.Name]
		if !ok {
			values[p.Name] = p.Default
			continue
		}
		v, err := p.Parse(text)
		if err != nil {
			return nil, err
		}
		values[p.Name] = v
	}
	return values, nil
}

// isDecimalInt reports whether s is a wire int: an optional '-' and ASCII digits, nothing else
// (kernels/contract/README.md "Parameter values"; strconv.ParseInt alone also takes a '+').
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

// isDecimalFloat reports whether s is a wire float: -?(digits[.digits]|.digits)([eE][+-]?digits)?
// (strconv.ParseFloat alone also takes '+', hex, "inf" and underscores).
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
