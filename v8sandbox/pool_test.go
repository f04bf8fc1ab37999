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
