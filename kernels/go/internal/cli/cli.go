// Package cli implements the kernel CLI of DESIGN 3.1 for the Go kernels:
//
//	ctxbench-kernels-go --list
//	ctxbench-kernels-go --run ID [--param NAME=VALUE]... [--repetitions N] [--min-time SECONDS] [--sample-time SECONDS]
//
// Exit 0: ok; 1: a self-check failed; 2: bad arguments; 3: the kernel cannot run on this host. Every
// failure is one line on stderr; stdout carries only the JSON.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/kernels"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitCheckFailed = 1
	ExitUsage       = 2
	ExitUnsupported = 3
)

// Defaults and bounds of the run options, shared by every kernel executable
// (kernels/contract/README.md "Defaults and limits").
const (
	DefaultRepetitions = 5
	DefaultMinTime     = 0.2
	MaxRepetitions     = 1000
	MaxMinTime         = 60.0
	// MaxSampleTime bounds --sample-time (no default: not given, a repetition is one long sample);
	// it must also be at most the --min-time in effect.
	MaxSampleTime = 1.0
)

const program = "ctxbench-kernels-go"

// The kernel registry; tests substitute kernels that fail on purpose.
var (
	allKernels = kernels.All
	findKernel = kernels.Find
)

const usage = "usage: " + program + " --list | --run ID [--param NAME=VALUE]... [--repetitions N] [--min-time SECONDS] [--sample-time SECONDS]"

// Command is a parsed command line.
type Command struct {
	List        bool
	Help        bool
	Run         string
	Params      map[string]string
	Repetitions int
	MinTime     float64
	// SampleTime is --sample-time in seconds, 0 when not given (kernels/contract/README.md "Short samples").
	SampleTime float64
}

// UsageError is a bad command line (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Parse parses the arguments (without the program name). Options take their value as the next
// argument or after "=": --run lock.go_mutex, --run=lock.go_mutex.
func Parse(args []string) (*Command, error) {
	c := &Command{Params: map[string]string{}, Repetitions: DefaultRepetitions, MinTime: DefaultMinTime}
	given := map[string]bool{} // options seen
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(arg, "=")
		// takeValue returns the option's value, inline or the next argument.
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", usageErrorf("option %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		switch name {
		case "--list", "--help", "-h":
			if hasValue {
				return nil, usageErrorf("option %s takes no value", name)
			}
			if name == "--list" {
				c.List = true
			} else {
				c.Help = true
			}
		case "--run", "--param", "--repetitions", "--min-time", "--sample-time":
			v, err := takeValue()
			if err == nil {
				err = c.setOption(name, v, given)
			}
			if err != nil {
				return nil, err
			}
		default:
			if strings.HasPrefix(arg, "-") {
				return nil, usageErrorf("unknown option %s", name)
			}
			return nil, usageErrorf("unexpected argument %q", arg)
		}
	}
	runSet := given["--run"]
	runOptions := runSet || len(c.Params) > 0 || given["--repetitions"] || given["--min-time"] || given["--sample-time"]
	if err := c.checkAction(runSet, runOptions); err != nil {
		return nil, err
	}
	// --sample-time is checked against the --min-time in effect, whichever came first.
	if given["--sample-time"] && c.SampleTime > c.MinTime {
		return nil, usageErrorf("--sample-time=%g is longer than --min-time=%g", c.SampleTime, c.MinTime)
	}
	return c, nil
}

// checkAction refuses a command without --list or --run, and --list with run options.
func (c *Command) checkAction(runSet, runOptions bool) error {
	switch {
	case c.Help:
	case c.List && runOptions:
		return usageErrorf("--list takes no other options")
	case !c.List && !runSet:
		return usageErrorf("give --list or --run ID")
	}
	return nil
}

// setOption applies one option that takes a value (v); given records the options seen.
func (c *Command) setOption(name, v string, given map[string]bool) error {
	var err error
	switch name {
	case "--run":
		if given[name] {
			return usageErrorf("--run given twice")
		}
		if v == "" {
			return usageErrorf("--run needs a kernel id")
		}
		c.Run = v
	case "--param":
		err = c.addParam(v)
	case "--repetitions":
		c.Repetitions, err = parseRepetitions(v)
	case "--min-time":
		c.MinTime, err = parseMinTime(v)
	case "--sample-time":
		if given[name] {
			return usageErrorf("--sample-time given twice")
		}
		c.SampleTime, err = parseSampleTime(v)
	}
	given[name] = true
	return err
}

// addParam records one --param NAME=VALUE (a name given twice is refused).
func (c *Command) addParam(v string) error {
	pname, pvalue, ok := strings.Cut(v, "=")
	if !ok || pname == "" {
		return usageErrorf("--param %q is not NAME=VALUE", v)
	}
	if _, dup := c.Params[pname]; dup {
		return usageErrorf("parameter %s given twice", pname)
	}
	c.Params[pname] = pvalue
	return nil
}

func parseRepetitions(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, usageErrorf("--repetitions: %q is not an integer", v)
	}
	if n < 1 || n > MaxRepetitions {
		return 0, usageErrorf("--repetitions=%d is out of range [1, %d]", n, MaxRepetitions)
	}
	return n, nil
}

func parseMinTime(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, usageErrorf("--min-time: %q is not a number of seconds", v)
	}
	if f <= 0 || f > MaxMinTime {
		return 0, usageErrorf("--min-time=%s is out of range (0, %g] seconds", v, MaxMinTime)
	}
	return f, nil
}

func parseSampleTime(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, usageErrorf("--sample-time: %q is not a number of seconds", v)
	}
	if f <= 0 || f > MaxSampleTime {
		return 0, usageErrorf("--sample-time=%s is out of range (0, %g] seconds", v, MaxSampleTime)
	}
	return f, nil
}

// result is the kernel JSON of DESIGN 3.1.
type result struct {
	Kernel     string             `json:"kernel"`
	Params     spec.Values        `json:"params"`
	Unit       string             `json:"unit"`
	Samples    []float64          `json:"samples"`
	Iterations []int64            `json:"iterations"`
	Counters   map[string]float64 `json:"counters"`
	Sampling   *harness.Sampling  `json:"sampling,omitempty"`
	Harness    harness.Info       `json:"harness"`
}

// Main runs the CLI and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
		fmt.Fprintf(stderr, "%s: %s\n", program, msg)
		return code
	}
	c, err := Parse(args)
	if err != nil {
		return fail(ExitUsage, err)
	}
	if c.Help {
		fmt.Fprintln(stdout, usage)
		return ExitOK
	}
	if c.List {
		specs := []spec.Kernel{}
		for _, k := range allKernels() {
			specs = append(specs, k.Spec)
		}
		return writeJSON(stdout, stderr, specs)
	}
	k, ok := findKernel(c.Run)
	if !ok {
		return fail(ExitUsage, usageErrorf("unknown kernel %q", c.Run))
	}
	values, err := k.Spec.Resolve(c.Params)
	if err != nil {
		return fail(ExitUsage, err)
	}
	kase, err := k.New(values)
	if err != nil {
		var unsupported *kernels.UnsupportedError
		if errors.As(err, &unsupported) {
			return fail(ExitUnsupported, err)
		}
		return fail(ExitCheckFailed, err)
	}
	res, err := harness.RunSampled(kase, c.Repetitions, c.MinTime, c.SampleTime)
	if err != nil {
		return fail(ExitCheckFailed, fmt.Errorf("%s: %w", k.Spec.ID, err))
	}
	return writeJSON(stdout, stderr, result{
		Kernel: k.Spec.ID, Params: values, Unit: k.Spec.Unit,
		Samples: res.Samples, Iterations: res.Iterations, Counters: res.Counters,
		Sampling: res.Sampling, Harness: res.Harness,
	})
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(stderr, "%s: encode JSON: %v\n", program, err)
		return ExitCheckFailed
	}
	data = append(data, '\n')
	if _, err := stdout.Write(data); err != nil {
		fmt.Fprintf(stderr, "%s: write stdout: %v\n", program, err)
		return ExitCheckFailed
	}
	return ExitOK
}
