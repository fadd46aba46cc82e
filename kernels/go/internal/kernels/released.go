package kernels

import (
	"sync"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/go/internal/harness"
)

// released is the contention pattern of the kernels whose op runs on many goroutines at once: it starts
// g goroutines that each run work once (given its index, 0 … g-1), parks them until all exist (creation is not timed), starts the
// clock as it releases them together and stops it when the last one returns.
func released(b *testing.B, m *harness.Meter, g int, work func(worker int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(g)
	done.Add(g)
	for i := 0; i < g; i++ {
		go func(worker int) {
			ready.Done()
			<-start
			work(worker)
			done.Done()
		}(i)
	}
	ready.Wait()
	m.Begin(b)
	close(start)
	done.Wait()
	m.End(b)
}
