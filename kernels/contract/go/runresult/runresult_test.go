package runresult

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The embedded copy is the contract's file, byte for byte, and MaxSamples is its samples maxItems.
func TestMaxSamplesIsTheContractsSamplesMaxItems(t *testing.T) {
	contract, err := os.ReadFile("../../kernel-cli.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(contract, schema) {
		t.Fatal("runresult/kernel-cli.schema.json differs from kernels/contract/kernel-cli.schema.json: run `make gen`")
	}
	want, err := maxItems(contract, "samples")
	if err != nil {
		t.Fatal(err)
	}
	if MaxSamples != want {
		t.Fatalf("MaxSamples = %d, the contract's samples maxItems = %d", MaxSamples, want)
	}
}

func TestMaxItemsRefusesASchemaWithoutIt(t *testing.T) {
	for _, doc := range []string{
		`{"$defs": {"run": {"properties": {"samples": {"type": "array"}}}}}`,
		`{"$defs": {"run": {"properties": {"samples": {"maxItems": 0}}}}}`,
		`{"$defs": {}}`,
		`not json`,
	} {
		if n, err := maxItems([]byte(doc), "samples"); err == nil {
			t.Errorf("%s: maxItems %d, want an error", doc, n)
		}
	}
	if n, err := maxItems([]byte(`{"$defs": {"run": {"properties": {"samples": {"maxItems": 7}}}}}`), "samples"); err != nil || n != 7 {
		t.Errorf("maxItems = %d, %v; want 7", n, err)
	}
	if _, err := maxItems([]byte(`{}`), "samples"); err == nil || !strings.Contains(err.Error(), "run.samples") {
		t.Errorf("error %v does not name run.samples", err)
	}
}
