package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/ctxbench/ctxbench/agent/internal/catalog"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/kernels/contract/go/runresult"
)

// samplesOverLimit says why n samples are too many for one result, or nil. The limit is the kernel
// contract's (run.samples maxItems in kernels/contract/kernel-cli.schema.json, read by runresult); the
// server refuses more by the same number.
func samplesOverLimit(n int) error {
	if n > runresult.MaxSamples {
		return fmt.Errorf("%d samples, more than the %d a result may carry", n, runresult.MaxSamples)
	}
	return nil
}

// maxReportBytes keeps a report well under gRPC's default 4 MiB message limit.
const maxReportBytes = 3 << 20

// kernelOutput is the one JSON object a kernel prints on `--run` (DESIGN 3.1).
type kernelOutput struct {
	Kernel     string                     `json:"kernel"`
	Params     map[string]json.RawMessage `json:"params"`
	Unit       string                     `json:"unit"`
	Samples    []float64                  `json:"samples"`
	Iterations []json.Number              `json:"iterations"`
	Counters   map[string]float64         `json:"counters"`
	Harness    *struct {
		Name     string  `json:"name"`
		Version  string  `json:"version"`
		MinTimeS float64 `json:"min_time_s"`
	} `json:"harness"`
	// Present when the kernel took short samples (--sample-time; kernels/contract/README.md).
	Sampling *struct {
		Estimator            string   `json:"estimator"`
		SampleTimeS          float64  `json:"sample_time_s"`
		SampleOps            int64    `json:"sample_ops"`
		SamplesPerRepetition uint32   `json:"samples_per_repetition"`
		Disturbed            []uint32 `json:"disturbed"`
	} `json:"sampling"`
}

// fillFromOutput parses a kernel's stdout into r (status OK), or returns why it is not a valid result.
// params are the validated parameters the kernel was asked to run with.
func fillFromOutput(r *agentv1.ResultReport, spec *agentv1.KernelSpec, params map[string]string, stdout []byte) error {
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var out kernelOutput
	if err := dec.Decode(&out); err != nil {
		return fmt.Errorf("kernel printed invalid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("kernel printed more than one JSON value")
	}
	if out.Kernel != "" && out.Kernel != spec.GetId() {
		return fmt.Errorf("kernel printed a result for %q, expected %q", out.Kernel, spec.GetId())
	}
	if len(out.Samples) == 0 {
		return errors.New("kernel result has no samples")
	}
	if err := samplesOverLimit(len(out.Samples)); err != nil {
		return fmt.Errorf("kernel result has %w", err)
	}
	for i, s := range out.Samples {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("kernel result sample %d is not finite", i)
		}
	}
	iters := make([]int64, 0, len(out.Iterations))
	for i, n := range out.Iterations {
		v, err := n.Int64()
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) || f < 0 || f > 1<<62 {
				return fmt.Errorf("kernel result iterations[%d] = %s is not a whole number", i, n)
			}
			v = int64(f)
		}
		iters = append(iters, v)
	}
	if len(iters) > 0 && len(iters) != len(out.Samples) {
		return fmt.Errorf("kernel result has %d samples but %d iteration counts", len(out.Samples), len(iters))
	}
	for k, v := range out.Counters {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel result counter %s is not finite", k)
		}
	}

	merged, err := mergeParams(spec, params, out.Params)
	if err != nil {
		return err
	}

	r.Status = agentv1.ResultStatus_RESULT_STATUS_OK
	r.Params = merged
	r.Unit = out.Unit
	if r.Unit == "" {
		r.Unit = spec.GetUnit()
	}
	r.Samples = out.Samples
	r.Iterations = iters
	r.Counters = out.Counters
	if out.Harness != nil {
		r.Harness = &agentv1.Harness{Name: out.Harness.Name, Version: out.Harness.Version, MinTimeS: out.Harness.MinTimeS}
	}
	if sm := out.Sampling; sm != nil {
		if len(sm.Disturbed) != len(out.Samples) || sm.SamplesPerRepetition == 0 {
			return fmt.Errorf("kernel's sampling gives %d disturbed counts and %d samples per repetition for %d samples",
				len(sm.Disturbed), sm.SamplesPerRepetition, len(out.Samples))
		}
		if r.Harness == nil {
			r.Harness = &agentv1.Harness{}
		}
		r.Harness.Estimator, r.Harness.SampleTimeS = sm.Estimator, sm.SampleTimeS
		r.Harness.SampleOps, r.Harness.SamplesPerRepetition = sm.SampleOps, sm.SamplesPerRepetition
		// This launch's short samples and how many the host disturbed; launch() moves them into its Launch.
		l := &agentv1.Launch{ShortSamples: sm.SamplesPerRepetition * uint32(len(out.Samples))}
		for _, d := range sm.Disturbed {
			l.DisturbedSamples += min(d, sm.SamplesPerRepetition)
		}
		r.Launches = []*agentv1.Launch{l}
	}
	return nil
}

// mergeParams is the parameters of a result: the kernel's own (canonicalised by their types) are the
// truth; those it omits are what it was asked to run with.
func mergeParams(spec *agentv1.KernelSpec, params map[string]string, ran map[string]json.RawMessage) (map[string]string, error) {
	types := map[string]agentv1.ParamType{}
	for _, p := range spec.GetParams() {
		types[p.GetName()] = p.GetType()
	}
	merged := make(map[string]string, len(params)+len(ran))
	for k, v := range params {
		merged[k] = v
	}
	names := make([]string, 0, len(ran))
	for k := range ran {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		t, ok := types[k]
		if !ok {
			t = agentv1.ParamType_PARAM_TYPE_STRING
		}
		v, err := catalog.CanonicalJSON(ran[k], t)
		if err != nil {
			return nil, fmt.Errorf("kernel result parameter %s: %v", k, err)
		}
		merged[k] = v
	}
	return merged, nil
}
