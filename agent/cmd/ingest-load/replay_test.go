package main

import (
	"path/filepath"
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func upd(msg string) *agentv1.ConnectRequest {
	return &agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunUpdate{RunUpdate: &agentv1.RunUpdate{
		RunId: "capture", ItemId: "item-0", State: agentv1.ItemState_ITEM_STATE_RUNNING, Message: msg}}}
}

func captured() []*agentv1.ConnectRequest {
	rep := &agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_ResultReport{ResultReport: &agentv1.ResultReport{
		ResultId: "r0", RunId: "capture", ItemId: "item-0", KernelId: "k", Params: map[string]string{"a": "1"},
		Samples: []float64{1, 2}}}}
	return []*agentv1.ConnectRequest{upd("launch 1/2"), upd("launch 1/2 done"), upd("launch 2/2"), rep, upd("DONE")}
}

// The captured messages are written and read back as they were, and made each item's own on replay.
func TestReplayMakesTheCaptureEachItems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "msgs.pb")
	if err := writeMessages(path, captured()); err != nil {
		t.Fatal(err)
	}
	tmpl, err := readMessages(path)
	if err != nil || len(tmpl) != 5 {
		t.Fatalf("read %d messages, %v", len(tmpl), err)
	}
	run := &agentv1.StartRun{RunId: "run-1", Items: []*agentv1.RunItem{
		{ItemId: "i0", KernelId: "k"}, {ItemId: "i1", KernelId: "k", Params: map[string]string{"a": "2"}}}}
	a, b := item(tmpl, run, 0), item(tmpl, run, 1)
	ra, rb := a[3].GetResultReport(), b[3].GetResultReport()
	if ra.GetResultId() == rb.GetResultId() || ra.GetResultId() == "r0" {
		t.Errorf("result ids %q, %q: want fresh and distinct", ra.GetResultId(), rb.GetResultId())
	}
	if rb.GetRunId() != "run-1" || rb.GetItemId() != "i1" || rb.GetParams()["a"] != "2" || len(rb.GetSamples()) != 2 {
		t.Errorf("second item's report %v", rb)
	}
	if u := b[4].GetRunUpdate(); u.GetRunId() != "run-1" || u.GetItemId() != "i1" || u.GetItemIndex() != 1 {
		t.Errorf("second item's DONE update %v", u)
	}
	coalesced := &agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_RunProgress{RunProgress: &agentv1.RunProgress{
		Updates: []*agentv1.RunUpdate{upd("launch 2/2 done").GetRunUpdate()}}}}
	if u := item([]*agentv1.ConnectRequest{coalesced}, run, 1)[0].GetRunProgress().GetUpdates()[0]; u.GetRunId() != "run-1" ||
		u.GetItemId() != "i1" || u.GetItemIndex() != 1 {
		t.Errorf("second item's coalesced progress %v", u)
	}
	if tmpl[3].GetResultReport().GetResultId() != "r0" {
		t.Error("the template itself changed")
	}
	if got := reportOnly(tmpl); len(got) != 3 || got[1].GetResultReport() == nil {
		t.Errorf("reportOnly kept %d messages", len(got))
	}
}
