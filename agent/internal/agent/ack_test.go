package agent

import (
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestOneAckAcknowledgesTheResultsStoredTogether(t *testing.T) {
	spoolDir := t.TempDir()
	_, _, sc := connected(t, spoolDir)
	if !sc.hello.GetBatchedAcks() {
		t.Fatal("Hello.batched_acks not set: the server would acknowledge result by result")
	}
	sc.startRun(t, "run-1", item("i1", "fake.ok", nil), item("i2", "fake.ok", nil), item("i3", "fake.ok", nil))
	l := sc.collect(t, false, "run-1")
	if len(l.results) != 3 || spoolCount(t, spoolDir) != 3 {
		t.Fatalf("results %d, spooled %d; want 3 unacknowledged", len(l.results), spoolCount(t, spoolDir))
	}
	ack := &agentv1.ResultAck{ResultId: l.results["i1"].GetResultId(), MoreResultIds: []string{l.results["i3"].GetResultId()}}
	sc.send(t, &agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_ResultAck{ResultAck: ack}})
	waitFor(t, "the two acknowledged results to leave the spool", func() bool { return spoolCount(t, spoolDir) == 1 })
	sc.ack(t, l.results["i2"].GetResultId())
	waitFor(t, "spool to empty", func() bool { return spoolCount(t, spoolDir) == 0 })
}
