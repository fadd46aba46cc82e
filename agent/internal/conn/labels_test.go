package conn

import (
	"testing"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// helloServer says Welcome and hands each Hello to the test.
type helloServer struct {
	agentv1.UnimplementedAgentServiceServer
	hello chan *agentv1.Hello
}

func (s *helloServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	hello, err := welcome(stream)
	if err != nil {
		return err
	}
	s.hello <- hello
	<-stream.Context().Done()
	return nil
}

func TestHelloCarriesTheLabels(t *testing.T) {
	hs := &helloServer{hello: make(chan *agentv1.Hello, 1)}
	addr := serveAgentService(t, hs)
	stop := runClient(t, Options{Server: addr, AgentVersion: "test", Name: "test",
		Labels: map[string]string{"env": "prod", "rack": "r7", "canary": ""}})
	defer stop()
	select {
	case hello := <-hs.hello:
		got := hello.GetLabels()
		if len(got) != 3 || got["env"] != "prod" || got["rack"] != "r7" || got["canary"] != "" {
			t.Fatalf("Hello labels = %v, want env=prod rack=r7 canary=", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no Hello")
	}
}
