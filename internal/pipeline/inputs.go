package pipeline

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxInputRounds bounds the input rounds of one call (the go-sdk's own
// bound for its clients).
const MaxInputRounds = 10

// An Answerer answers the input requests a backend returns instead of a
// result (SEP-2322: inputRequests and a requestState) on behalf of the
// call's client: by asking the client the pre-2026-07-28 way, or by
// handing them to a 2026-07-28 client through its own retry.
type Answerer interface {
	// Answer returns a response for every request, by id.
	Answer(ctx context.Context, c *Call, requests mcp.InputRequestMap) (mcp.InputResponseMap, error)
}

type answererKey struct{}

// WithAnswerer returns ctx carrying the answerer of the calls made under
// it. Without one, a result with input requests is returned as it is (a
// 2026-07-28 client's passthrough call: the client retries itself).
func WithAnswerer(ctx context.Context, a Answerer) context.Context {
	return context.WithValue(ctx, answererKey{}, a)
}

// InputStage continues a call whose backend asked for input while the
// context has an [Answerer]: the answers and the backend's untouched
// requestState go back to the backend in the same call, for at most
// [MaxInputRounds] rounds. It sits next to the backend, so the rounds are
// one call for every other stage (one approval, one record, one
// observation).
func InputStage() Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			res, err := next.Call(ctx, c)
			a, _ := ctx.Value(answererKey{}).(Answerer)
			if a == nil {
				return res, err
			}
			for round := 0; err == nil && res != nil && res.InputRequests != nil; round++ {
				if round == MaxInputRounds {
					return nil, fmt.Errorf("%s asked for input more than %d times in one call", c.Name(), MaxInputRounds)
				}
				if len(res.InputRequests) == 0 {
					return nil, fmt.Errorf("%s is busy (an input round with no requests); retry later", c.Name())
				}
				responses, aerr := a.Answer(ctx, c, res.InputRequests)
				if aerr != nil {
					return nil, fmt.Errorf("%s asked for input: %w", c.Name(), aerr)
				}
				again := *c
				again.InputResponses, again.RequestState = responses, res.RequestState
				res, err = next.Call(ctx, &again)
			}
			return res, err
		})
	}
}
