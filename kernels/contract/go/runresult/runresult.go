// Package runresult holds the limits of a kernel's `--run` result that the agent enforces, read from
// the kernel contract itself: kernel-cli.schema.json here is the copy of kernels/contract/ that
// `make gen` places beside this file (a module cannot embed files outside its own directory), and
// `make gen-check` fails when the two differ. The server reads its own copy of the same file
// (ctxbench_server/gen/kernel-cli.schema.json), so both ends refuse a result past one number.
package runresult

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed kernel-cli.schema.json
var schema []byte

// MaxSamples is the most samples one result may carry: the `run` definition's samples maxItems.
var MaxSamples = mustMaxItems(schema, "samples")

// maxItems reads `$defs.run.properties.<field>.maxItems` from a kernel CLI schema.
func maxItems(doc []byte, field string) (int, error) {
	var s struct {
		Defs struct {
			Run struct {
				Properties map[string]struct {
					MaxItems *int `json:"maxItems"`
				} `json:"properties"`
			} `json:"run"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return 0, fmt.Errorf("parse kernel CLI schema: %w", err)
	}
	p, ok := s.Defs.Run.Properties[field]
	if !ok || p.MaxItems == nil || *p.MaxItems < 1 {
		return 0, fmt.Errorf("kernel CLI schema: run.%s has no positive maxItems", field)
	}
	return *p.MaxItems, nil
}

func mustMaxItems(doc []byte, field string) int {
	n, err := maxItems(doc, field)
	if err != nil {
		panic(err) // the embedded copy is checked by this package's tests and `make gen-check`
	}
	return n
}
