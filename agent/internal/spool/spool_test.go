package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestAgentIDIsCreatedOnceAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "spool")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.AgentID()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("agent id %q is not a UUID", id)
	}
	s2, _ := Open(dir)
	id2, err := s2.AgentID()
	if err != nil || id2 != id {
		t.Fatalf("second AgentID = %q, %v; want %q", id2, err, id)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "agent-id"))
	if strings.TrimSpace(string(b)) != id {
		t.Fatalf("agent-id file holds %q", b)
	}
}

func TestAgentIDRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent-id"), []byte("not-a-uuid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(dir)
	if _, err := s.AgentID(); err == nil {
		t.Fatal("no error for a corrupt agent-id")
	}
}

func TestPutGetListByItemDelete(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &agentv1.ResultReport{ResultId: uuid.NewString(), RunId: "r1", ItemId: "i1",
		Status: agentv1.ResultStatus_RESULT_STATUS_OK, Samples: []float64{1.5, 2}, Params: map[string]string{"n": "1"}}
	b := &agentv1.ResultReport{ResultId: uuid.NewString(), RunId: "r1", ItemId: "i2",
		Status: agentv1.ResultStatus_RESULT_STATUS_FAILED, Error: "boom"}
	for _, r := range []*agentv1.ResultReport{a, b} {
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := s.IDs()
	if err != nil || len(ids) != 2 {
		t.Fatalf("IDs = %v, %v", ids, err)
	}
	got, err := s.Get(a.GetResultId())
	if err != nil || !proto.Equal(got, a) {
		t.Fatalf("Get = %v, %v; want %v", got, err, a)
	}
	byItem, err := s.ByItem("i2")
	if err != nil || byItem.GetResultId() != b.GetResultId() {
		t.Fatalf("ByItem(i2) = %v, %v", byItem, err)
	}
	if none, err := s.ByItem("i9"); err != nil || none != nil {
		t.Fatalf("ByItem(i9) = %v, %v", none, err)
	}
	if err := s.Delete(a.GetResultId()); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(a.GetResultId()); err != nil {
		t.Fatalf("repeated delete: %v", err)
	}
	ids, _ = s.IDs()
	if len(ids) != 1 || ids[0] != b.GetResultId() {
		t.Fatalf("after delete IDs = %v", ids)
	}
	// no temp files left behind
	entries, _ := os.ReadDir(filepath.Join(s.Dir(), "results"))
	if len(entries) != 1 {
		t.Fatalf("results dir holds %d entries", len(entries))
	}
}

func TestRefusesNonUUIDIDs(t *testing.T) {
	s, _ := Open(t.TempDir())
	if err := s.Put(&agentv1.ResultReport{ResultId: "../../etc/passwd"}); err == nil {
		t.Error("Put accepted a path as result id")
	}
	if err := s.Delete("../agent-id"); err == nil {
		t.Error("Delete accepted a path as result id")
	}
}

func TestLockIsExclusiveAndCleansTempFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	stale := filepath.Join(dir, "results", ".tmp-x.json-123")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale temp file left in place")
	}
	other, _ := Open(dir)
	if _, err := other.Lock(); err == nil || !strings.Contains(err.Error(), "in use by another agent") {
		t.Errorf("second lock: %v", err)
	}
	release()
	release2, err := other.Lock()
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release2()
}

func TestRejectMovesResultAside(t *testing.T) {
	s, _ := Open(t.TempDir())
	r := &agentv1.ResultReport{ResultId: uuid.NewString(), ItemId: "i"}
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(r.GetResultId()); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.IDs(); len(ids) != 0 {
		t.Errorf("rejected result still pending: %v", ids)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "rejected", r.GetResultId()+".json")); err != nil {
		t.Errorf("rejected result not kept: %v", err)
	}
	if err := s.Reject(r.GetResultId()); err != nil {
		t.Errorf("repeated reject: %v", err)
	}
}

func TestUndecodableResultIsQuarantined(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	if err := os.WriteFile(s.ResultPath(id), []byte("\x00garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ByItem("i1"); err != nil || r != nil { // looking leaves it in place
		t.Fatalf("ByItem = %v, %v", r, err)
	}
	_, err = s.Get(id)
	if !errors.Is(err, ErrQuarantined) {
		t.Fatalf("Get = %v, want ErrQuarantined", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "quarantine", id+".json")); err != nil {
		t.Fatalf("not in quarantine/: %v", err)
	}
	if ids, err := s.IDs(); err != nil || len(ids) != 0 {
		t.Fatalf("IDs = %v, %v; want none", ids, err)
	}
	if _, err := s.Get(id); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("second Get = %v, want not found", err)
	}
}
