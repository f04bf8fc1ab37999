package v8sandbox

import (
	"context"
	"fmt"
	"testing"
)

// The behaviour every runner shares is in package sandboxtest
// (suite_test.go); these tests cover what only the in-process pool has.

func TestRun_RecyclingKeepsWorking(t *testing.T) {
	pool := NewPool(Options{Workers: 1, RecycleAfter: 3})
	defer pool.Close()
	for i := range 10 {
		res, err := pool.Run(context.Background(), Job{Source: fmt.Sprint(i), AwaitResult: true}, nil)
		if err != nil || string(res.Value) != fmt.Sprint(i) {
			t.Fatalf("run %d: %s %v", i, res.Value, err)
		}
	}
}

// RunThen delivers the outcome while the worker still counts as busy (it is
// tidied and offered to the next caller only afterwards), errors included.
func TestRunThen_DeliversBeforeTheWorkerIsFree(t *testing.T) {
	pool := NewPool(Options{Workers: 1})
	defer pool.Close()
	for _, c := range []struct{ src, want string }{{"6 * 7", "42"}, {"throw new Error('boom')", ""}} {
		delivered := false
		pool.RunThen(context.Background(), Job{Source: c.src, AwaitResult: true}, nil, func(res Result, err error) {
			delivered = true
			if busy := pool.Busy(); busy != 1 {
				t.Errorf("%s: Busy() = %d while delivering, want 1", c.src, busy)
			}
			if c.want != "" && (err != nil || string(res.Value) != c.want) {
				t.Errorf("%s: got %s %v, want %s", c.src, res.Value, err, c.want)
			}
			if c.want == "" && CodeOf(err) != CodeEval {
				t.Errorf("%s: got %v, want EVAL_ERROR", c.src, err)
			}
		})
		if !delivered {
			t.Fatalf("%s: outcome not delivered", c.src)
		}
		if busy := pool.Busy(); busy != 0 {
			t.Errorf("%s: Busy() = %d after RunThen, want 0", c.src, busy)
		}
	}
}
