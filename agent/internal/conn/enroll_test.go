package conn

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// lostAnswerServer enrolls as the ctxbench server does, but the answer to the first Enroll is lost
// after the machine was stored: a retry gets a credential only with the key the first try stored.
type lostAnswerServer struct {
	agentv1.UnimplementedAgentServiceServer
	mu         sync.Mutex
	keys       []string // every Enroll's key, in order
	key        string   // the stored machine's key; "" before the first Enroll
	credential string
	welcomed   chan struct{}
}

func (s *lostAnswerServer) Enroll(_ context.Context, req *agentv1.EnrollRequest) (*agentv1.EnrollResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, req.GetEnrollmentKey())
	if len(s.keys) == 1 {
		s.key = req.GetEnrollmentKey()
		s.credential = "cred-1"
		return nil, status.Error(codes.Unavailable, "the answer was lost")
	}
	if req.GetEnrollmentKey() == "" || req.GetEnrollmentKey() != s.key {
		return nil, status.Errorf(codes.PermissionDenied, "machine %s is already enrolled", req.GetProposedMachineId())
	}
	s.credential = fmt.Sprintf("cred-%d", len(s.keys))
	return &agentv1.EnrollResponse{MachineId: req.GetProposedMachineId(), MachineCredential: s.credential}, nil
}

func (s *lostAnswerServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	s.mu.Lock()
	want := "Bearer " + s.credential
	s.mu.Unlock()
	if got := md.Get("authorization"); len(got) != 1 || got[0] != want {
		return status.Error(codes.Unauthenticated, "unknown machine credential")
	}
	if _, err := welcome(stream); err != nil {
		return err
	}
	close(s.welcomed)
	<-stream.Context().Done()
	return nil
}

// An Enroll whose answer is lost after the server stored the machine: the retry sends the same key,
// read from the state dir, and the agent ends up enrolled (with a join token, a refusal would end it).
func TestEnrollRetryWithTheSameKeyAfterALostAnswer(t *testing.T) {
	srv := &lostAnswerServer{welcomed: make(chan struct{})}
	addr := serveAgentService(t, srv)
	dir := t.TempDir()
	sp, err := spool.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Server: addr, EnrollToken: "cxj_t", JoinToken: true,
			SaveCredential: sp.SaveCredential, EnrollKey: sp.EnrollKey, TLS: TLSOptions{Insecure: true},
			AgentID: "a", AgentVersion: "test", Name: "test", Spool: sp, Outbox: NewOutbox(), Handler: idleHandler{},
			Facts:      func() *agentv1.MachineFacts { return &agentv1.MachineFacts{} },
			Log:        slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	}()
	select {
	case <-srv.welcomed:
	case err := <-done:
		t.Fatalf("agent stopped before it was welcomed: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("agent never connected")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	b, err := os.ReadFile(filepath.Join(dir, spool.EnrollKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(b))
	srv.mu.Lock()
	keys := srv.keys
	srv.mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] != key || keys[1] != key {
		t.Fatalf("%d Enrolls, keys equal to the stored one: %v; want 2, the stored key on both", len(keys), eachIs(keys, key))
	}
	if st, err := os.Stat(filepath.Join(dir, spool.EnrollKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("enrollment key file: %v, mode %v; want 0600", err, st.Mode().Perm())
	}
	if cred, err := sp.Credential(); err != nil || cred != "cred-2" {
		t.Fatalf("stored credential %q (%v), want cred-2", cred, err)
	}
	if strings.Contains(logs.String(), key) {
		t.Fatal("the agent logged its enrollment key")
	}
}

func eachIs(got []string, want string) []bool {
	out := make([]bool, len(got))
	for i, g := range got {
		out[i] = g == want
	}
	return out
}
