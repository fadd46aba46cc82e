package conn

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// The client's tests run it against small AgentService servers of their own on loopback.

// serveAgentService serves impl on a loopback port until the test ends, and returns its address.
func serveAgentService(t *testing.T, impl agentv1.AgentServiceServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, impl)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// welcome reads a stream's Hello and answers Welcome (the machine id is the agent id; heartbeats every
// 60 s, so none interferes).
func welcome(stream agentv1.AgentService_ConnectServer) (*agentv1.Hello, error) {
	first, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	hello := first.GetHello()
	return hello, stream.Send(&agentv1.ConnectResponse{Msg: &agentv1.ConnectResponse_Welcome{Welcome: &agentv1.Welcome{
		MachineId: hello.GetAgentId(), HeartbeatIntervalS: 60}}})
}

type idleHandler struct{}

func (idleHandler) StartRun(*agentv1.StartRun)   {}
func (idleHandler) CancelRun(*agentv1.CancelRun) {}
func (idleHandler) CurrentRunID() string         { return "" }

// runClient runs the client with o (plus a credential, plaintext, a spool, and an idle handler unless
// o has one) until stop.
func runClient(t *testing.T, o Options) (stop func()) {
	t.Helper()
	sp, err := spool.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o.Credential, o.TLS, o.AgentID = "cred", TLSOptions{Insecure: true}, "a"
	o.Facts = func() *agentv1.MachineFacts { return &agentv1.MachineFacts{} }
	o.Spool, o.Outbox = sp, NewOutbox()
	if o.Handler == nil {
		o.Handler = idleHandler{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
