package v8sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/isogate/isogate/v8sandbox"
)

func ExamplePool() {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
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

// A script reaches Go only through the host functions its job declares.
func ExampleHostFunc() {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()

	double := v8sandbox.HostFunc(func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		var n []int
		if err := json.Unmarshal(args, &n); err != nil {
			return nil, err
		}
		return json.Marshal(2 * n[0])
	})
	res, err := pool.Run(context.Background(), v8sandbox.Job{
		Source:      `double(21).then(n => ({answer: n}))`,
		Functions:   []v8sandbox.Function{{Name: "double", Async: true}},
		AwaitResult: true,
	}, double)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Value), res.HostCalls)
	// Output: {"answer":42} 1
}

// A run that exceeds its limits ends with an *Error carrying a code.
func ExamplePool_Run_timeout() {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()

	_, err := pool.Run(context.Background(), v8sandbox.Job{
		Source: `for (;;) {}`,
		Limits: v8sandbox.Limits{Timeout: 50 * time.Millisecond},
	}, nil)
	fmt.Println(v8sandbox.CodeOf(err))
	// Output: TIMEOUT
}
