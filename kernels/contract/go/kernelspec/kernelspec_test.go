package kernelspec

import (
	"strings"
	"testing"
)

func TestFormatFloat(t *testing.T) {
	cases := map[float64]string{
		0.5: "0.5", 1: "1.0", 0: "0.0", -2: "-2.0", 0.1: "0.1", 1e-4: "0.0001", 1e-5: "1e-05",
		123456.789: "123456.789", 1e16: "1e+16", 1.5e16: "1.5e+16", 9999999999999998: "9999999999999998.0",
		0.2: "0.2", 1.0 / 3: "0.3333333333333333",
	}
	for in, want := range cases {
		if got := FormatFloat(in); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestIntParse(t *testing.T) {
	p := IntParam("goroutines", 2, 1, 16, nil, "")
	for text, want := range map[string]int64{"1": 1, "16": 16, "7": 7} {
		v, err := p.Parse(text)
		if err != nil || v != want {
			t.Errorf("Parse(%q) = %v, %v; want %d", text, v, err, want)
		}
	}
	for _, text := range []string{"0", "17", "-1", "1.5", "", "two", "0x10", "99999999999999999999"} {
		v, err := p.Parse(text)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", text, v)
		} else if !strings.HasPrefix(err.Error(), "parameter goroutines: ") {
			t.Errorf("Parse(%q) error %q does not name the parameter first", text, err)
		}
	}
	// An int64 bound is compared exactly, not through float64 (2^53+1 rounds to 2^53).
	big := IntParam("n", 1, 1, 1<<53, nil, "")
	if _, err := big.Parse("9007199254740993"); err == nil {
		t.Error("2^53+1 accepted under a maximum of 2^53")
	}
}

func TestChoiceParse(t *testing.T) {
	p := ChoiceParam("topology", "star", []string{"star", "pairs"}, "")
	if v, err := p.Parse("pairs"); err != nil || v != "pairs" {
		t.Errorf("Parse(pairs) = %v, %v", v, err)
	}
	for _, text := range []string{"", "Star", "ring"} {
		if _, err := p.Parse(text); err == nil {
			t.Errorf("Parse(%q) succeeded", text)
		}
	}
}

func TestResolve(t *testing.T) {
	k := Kernel{ID: "k", Params: []Param{
		IntParam("n", 2, 1, 8, nil, ""),
		ChoiceParam("mode", "a", []string{"a", "b"}, ""),
	}}
	v, err := k.Resolve(map[string]string{"mode": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 2 || v.String("mode") != "b" {
		t.Errorf("resolved %v", v)
	}
	if _, err := k.Resolve(map[string]string{"m": "1"}); err == nil {
		t.Error("unknown parameter accepted")
	}
	if _, err := k.Resolve(map[string]string{"n": "9"}); err == nil {
		t.Error("out-of-range value accepted")
	}
}
