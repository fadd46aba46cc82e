package kernels

// Family channel: goroutine hand-off over unbuffered channels.
//
// channel.pingpong measures one message delivered over an unbuffered channel to a goroutine parked in
// receive, the sender then blocking on its reply. Each message is one goroutine switch at procs=1
// (sender parks, receiver runs), so a round trip is two ops. topology=star is seed 002's shape: one
// driver sends to `goroutines` echo goroutines in turn and waits for each reply; topology=pairs runs
// `goroutines` independent pinger/echo pairs. Seed 002 reports 1407-1684 ns per round trip for 30000 echo
// goroutines on a Windows home machine; seed 000 (g_chan.go) reads 60-70 ns per chan switch at any
// concurrency on a Pentium G2030 (GOMAXPROCS 1).

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
	"github.com/ctxbench/ctxbench/kernels/go/internal/spec"
)

func chanPingPong() Kernel {
	return Kernel{
		Spec: spec.Kernel{
			ID:     "channel.pingpong",
			Title:  "Goroutine ping-pong over unbuffered channels",
			Family: "channel",
			Unit:   "ns/op",
			Description: "Round trips over unbuffered channels: a sender hands a value to a goroutine parked in " +
				"receive and blocks for the reply, which comes back the same way. One op is one message " +
				"delivered, which at procs=1 is exactly one goroutine switch (a round trip is 2 ops). " +
				"topology=star is seed 002's benchmark (one driver, `goroutines` echo goroutines served in " +
				"turn); topology=pairs runs `goroutines` independent pinger/echo pairs. Every reply is checked. " +
				"Goroutine switches stay inside one OS thread, so the OS context-switch counters stay near zero " +
				"at procs=1.",
			Params: []spec.Param{
				spec.IntParam("goroutines", 1, 1, 30000, []int64{1, 10, 100, 1000, 10000, 30000},
					"echo goroutines (star) or pinger/echo pairs (pairs); seed 002 used 30000"),
				spec.ChoiceParam("topology", "star", []string{"star", "pairs"},
					"star: one driver round-robins over the echo goroutines (seed 002); pairs: independent pairs"),
				procsParam(),
			},
			SeedReference: &spec.SeedReference{
				Seed:    "002",
				Value:   768.5,
				Unit:    "ns/op",
				Machine: "the author's Windows home machine (CPU not named), Go of about 2017, default GOMAXPROCS",
				Params:  map[string]string{"goroutines": "30000", "topology": "star"},
				Note: "5 rounds of 30000 goroutines x 1000 round trips over buffered(1) channels: 1407, 1490, " +
					"1684, 1522, 1582 ns per round trip (mean 1537), halved here to ns per message. Seed 000 " +
					"(g_chan.go, Pentium G2030, GOMAXPROCS 1) read 60-70 ns per chan switch at any concurrency.",
			},
		},
		New: func(v spec.Values) (*harness.Case, error) {
			g := v.Int("goroutines")
			c := &harness.Case{OpsPerIter: 2 * g, Procs: int(v.Int("procs"))}
			if v.String("topology") == "pairs" {
				c.Bench = func(b *testing.B, m *harness.Meter) { pingPongPairs(b, m, int(g)) }
			} else {
				echoes := &echoSet{g: int(g)}
				c.Bench = func(b *testing.B, m *harness.Meter) { pingPongStar(b, m, echoes) }
			}
			return c, nil
		},
	}
}

// echo answers every value v with v+1 until in is closed.
func echo(in <-chan int64, out chan<- int64, ready, done *sync.WaitGroup) {
	ready.Done()
	for v := range in {
		out <- v + 1
	}
	done.Done()
}

// echoSet is g echo goroutines, started by get's first call. star keeps one set for the process, parked
// in receive between benchmark calls (as seed 002 serves the same 30000 goroutines round after round):
// the harness calls the body for every short sample (testing.Benchmark twice a call), and starting 30000
// goroutines each time made every short sample at least as long as that set-up (the harness's rule) and
// timed each round on just-created stacks. pairs starts and stops a set each call, beside its pingers.
type echoSet struct {
	g         int
	ins, outs []chan int64
	done      sync.WaitGroup
}

// stop ends the echoes and waits until every one has returned.
func (e *echoSet) stop() {
	for _, in := range e.ins {
		close(in)
	}
	e.done.Wait()
}

func (e *echoSet) get() (ins, outs []chan int64) {
	if e.ins == nil {
		e.ins, e.outs = make([]chan int64, e.g), make([]chan int64, e.g)
		var ready sync.WaitGroup
		ready.Add(e.g)
		e.done.Add(e.g)
		for i := range e.ins {
			e.ins[i], e.outs[i] = make(chan int64), make(chan int64)
			go echo(e.ins[i], e.outs[i], &ready, &e.done)
		}
		ready.Wait()
	}
	return e.ins, e.outs
}

func pingPongStar(b *testing.B, m *harness.Meter, echoes *echoSet) {
	ins, outs := echoes.get()
	g := len(ins)
	var replies int64
	m.Begin(b)
	for i := 0; i < b.N; i++ {
		v := int64(i)
		for j := range ins {
			ins[j] <- v
			replies += <-outs[j] - v
		}
	}
	m.End(b)
	m.Count("replies", replies)
	if want := int64(b.N) * int64(g); replies != want {
		m.Fail("channel.pingpong: %d correct replies, want %d", replies, want)
	}
	sink = replies
}

func pingPongPairs(b *testing.B, m *harness.Meter, g int) {
	echoes := &echoSet{g: g}
	ins, outs := echoes.get()
	defer echoes.stop()
	var replies atomic.Int64
	n := b.N
	released(b, m, g, func(j int) {
		in, out := ins[j], outs[j]
		var ok int64
		for i := 0; i < n; i++ {
			v := int64(i)
			in <- v
			ok += <-out - v
		}
		replies.Add(ok)
	})
	m.Count("replies", replies.Load())
	if got, want := replies.Load(), int64(b.N)*int64(g); got != want {
		m.Fail("channel.pingpong: %d correct replies, want %d", got, want)
	}
	sink = replies.Load()
}
