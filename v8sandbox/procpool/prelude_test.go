package procpool

import (
	"context"
	"fmt"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// Preludes cross the pipe once per worker and are then named by reference:
// with more distinct preludes than a worker holds, interleaved and
// concurrent, every run must still see exactly its own prelude.
func TestPreludesByReference(t *testing.T) {
	p := newTestPool(t, Options{Workers: 1, SlotsPerWorker: 2})
	n := preludeCacheSize + 4
	prelude := func(i int) string {
		// Long enough that a frame without the text is visibly smaller.
		return fmt.Sprintf("globalThis.which = %d; // %0512d\n", i, i)
	}
	errs := make(chan error, 2)
	for w := range 2 {
		go func() {
			for round := range 3 {
				for k := range n {
					i := (k*7 + w + round) % n
					job := v8sandbox.Job{Source: "which", Prelude: prelude(i), AwaitResult: true}
					res, err := p.Run(context.Background(), job, nil)
					if err != nil {
						errs <- fmt.Errorf("prelude %d: %w", i, err)
						return
					}
					if got := string(res.Value); got != fmt.Sprint(i) {
						errs <- fmt.Errorf("prelude %d: the run saw prelude %s", i, got)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestPreludeCacheDropsTheOldest(t *testing.T) {
	var c preludeCache
	for i := range preludeCacheSize + 1 {
		c.add(fmt.Sprint(i), fmt.Sprint("text", i))
	}
	if _, ok := c.get("0"); ok {
		t.Error("the oldest prelude is still held")
	}
	if text, ok := c.get(fmt.Sprint(preludeCacheSize)); !ok || text != fmt.Sprint("text", preludeCacheSize) {
		t.Errorf("the newest prelude: %q, %v", text, ok)
	}
	if len(c.order) != preludeCacheSize || len(c.texts) != preludeCacheSize {
		t.Errorf("holds %d/%d preludes, want %d", len(c.order), len(c.texts), preludeCacheSize)
	}
}
