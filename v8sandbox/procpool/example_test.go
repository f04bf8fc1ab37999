package procpool_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/isogate/isogate/v8sandbox"
	"github.com/isogate/isogate/v8sandbox/procpool"
)

// The workers are this very binary started as "sandbox-worker": a program
// that uses the default Command calls procpool.RunWorkerIfRequested first
// thing in main (a test binary, in TestMain).
func Example() {
	pool, err := procpool.New(procpool.Options{Workers: 1, SlotsPerWorker: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	res, err := pool.Run(context.Background(), v8sandbox.Job{
		Source:      `[1, 2, 3].map(x => x * x)`,
		AwaitResult: true,
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Value))
	// Output: [1,4,9]
}

// A script that makes V8 abort costs its worker process, which the pool
// replaces, never the caller's process.
func ExamplePool_Run_crash() {
	pool, err := procpool.New(procpool.Options{Workers: 1, SlotsPerWorker: 1,
		Logger: slog.New(slog.DiscardHandler)}) // the worker's crash dump is logged
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	ctx := context.Background()
	_, err = pool.Run(ctx, v8sandbox.Job{Source: `'x'.repeat(2**27).split('')`}, nil)
	fmt.Println(v8sandbox.CodeOf(err))
	res, err := pool.Run(ctx, v8sandbox.Job{Source: `"still here"`, AwaitResult: true}, nil)
	fmt.Println(string(res.Value), err)
	// Output:
	// HEAP_LIMIT
	// "still here" <nil>
}
