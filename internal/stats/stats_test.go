package stats

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestCounters(t *testing.T) {
	var c Counters
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%5 == 0 {
				err = errors.New("boom")
			}
			c.ToolCall("b.t", 100, time.Millisecond, err)
			c.Run("v8", 1000, 250, 2000, false)
		}()
	}
	wg.Wait()
	s := c.Snapshot()
	if s.ToolCalls != 10 || len(s.Tools) != 1 || s.Tools[0].Errors != 2 || s.Tools[0].BytesOut != 1000 {
		t.Fatalf("tools: %+v", s)
	}
	if s.Runs["v8"] != 10 || s.BytesProcessed != 10000 || s.BytesReturned != 2500 || s.BytesReceived != 20000 ||
		s.BytesKeptOut != 17500 || s.ReductionPct != 87.5 {
		t.Fatalf("runs: %+v", s)
	}
}
