package kernelspec

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatInt is the canonical string of an int parameter: plain decimal.
func FormatInt(v int64) string { return strconv.FormatInt(v, 10) }

// FormatFloat is the canonical string of a float parameter: the shortest decimal that round-trips,
// written as Python's repr writes it ("0.5", "1.0", "1e-05", "1e+16"), because the server that
// converts typed values to canonical strings is Python and every side must agree byte for byte.
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

// Canonical checks the syntax of a wire value of type typ and returns its canonical string: ints and
// floats by the contract's grammar (strconv alone takes '+', hex, "inf" and underscores), bools
// "true"/"false" exactly; choice and string values come back as they are (Param.Check tests those).
func Canonical(typ, text string) (string, error) {
	switch typ {
	case TypeInt:
		if !isDecimalInt(text) {
			return "", fmt.Errorf("%q is not an integer", text)
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return "", fmt.Errorf("%q is out of the 64-bit integer range", text)
		}
		return FormatInt(i), nil
	case TypeFloat:
		f, err := strconv.ParseFloat(text, 64)
		if !isDecimalFloat(text) || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("%q is not a finite number", text)
		}
		return FormatFloat(f), nil
	case TypeBool:
		switch text {
		case "true", "false":
			return text, nil
		}
		return "", fmt.Errorf("%q is not a bool (want true or false)", text)
	}
	return text, nil
}

// Check validates a wire value against the parameter (type, bounds, choices, string rules) and returns
// its canonical string and its typed value (int64, float64, bool or string). The error says what is
// wrong with the value; the caller names the parameter.
func (p Param) Check(text string) (string, any, error) {
	v, err := Canonical(p.Type, text)
	if err != nil {
		return "", nil, err
	}
	switch p.Type {
	case TypeInt:
		n, _ := strconv.ParseInt(v, 10, 64)
		if err := p.checkBounds(v, float64(n), &n); err != nil {
			return "", nil, err
		}
		return v, n, nil
	case TypeFloat:
		f, _ := strconv.ParseFloat(v, 64)
		if err := p.checkBounds(v, f, nil); err != nil {
			return "", nil, err
		}
		return v, f, nil
	case TypeBool:
		return v, v == "true", nil
	case TypeChoice:
		for _, c := range p.Choices {
			if c == v {
				return v, v, nil
			}
		}
		return "", nil, fmt.Errorf("%q is not one of %s", v, strings.Join(p.Choices, ", "))
	case TypeString:
		if n := utf8.RuneCountInString(v); n > MaxString {
			return "", nil, fmt.Errorf("string of %d characters is longer than %d", n, MaxString)
		}
		if strings.ContainsRune(v, 0) {
			return "", nil, fmt.Errorf("string contains a NUL character")
		}
		return v, v, nil
	}
	return "", nil, fmt.Errorf("parameter has no valid type (%q)", p.Type)
}

// checkBounds tests a number against Min and Max; an int (exact non-nil) is compared exactly with
// int64 bounds.
func (p Param) checkBounds(canonical string, f float64, exact *int64) error {
	below := func(b any) bool {
		if n, ok := b.(int64); ok && exact != nil {
			return *exact < n
		}
		lo, ok := number(b)
		return ok && f < lo
	}
	above := func(b any) bool {
		if n, ok := b.(int64); ok && exact != nil {
			return *exact > n
		}
		hi, ok := number(b)
		return ok && f > hi
	}
	if below(p.Min) {
		return fmt.Errorf("%s is below the minimum %s", canonical, formatBound(p.Min))
	}
	if above(p.Max) {
		return fmt.Errorf("%s is above the maximum %s", canonical, formatBound(p.Max))
	}
	return nil
}

// number reads a bound: int64 or float64 as writers set them, json.Number as a reader decodes them.
func number(b any) (float64, bool) {
	switch x := b.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func formatBound(b any) string {
	if n, ok := b.(int64); ok {
		return FormatInt(n)
	}
	f, _ := number(b)
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return FormatInt(int64(f))
	}
	return FormatFloat(f)
}

// Parse converts a wire value into the parameter's typed value; the error is one line naming the
// parameter and what is wrong.
func (p Param) Parse(text string) (any, error) {
	_, v, err := p.Check(text)
	if err != nil {
		return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
	}
	return v, nil
}

// Values are typed parameter values by name (int64, float64, bool or string).
type Values map[string]any

// Int returns an int parameter's value; it panics when the kernel's own spec lacks it (a programming error).
func (v Values) Int(name string) int64 { return v[name].(int64) }

// String returns a choice or string parameter's value.
func (v Values) String(name string) string { return v[name].(string) }

// Resolve parses the given wire values against the kernel's params and fills in defaults.
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

// isDecimalInt reports whether s is a wire int: an optional '-' and ASCII digits, nothing else.
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

// isDecimalFloat reports whether s is a wire float: -?(digits[.digits]|.digits)([eE][+-]?digits)?.
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
