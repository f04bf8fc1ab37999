package pipeline

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/v8sandbox"
)

// CodeLeaseLost: the call belongs to a task this replica no longer holds
// (another replica took it over once its lease lapsed), or whose lease it
// could not confirm: it is not sent.
const CodeLeaseLost v8sandbox.Code = "LEASE_LOST"

// Fence decides, right before a call is sent to its backend, whether the
// run it belongs to may still act: nil, or why not (the call is refused).
type Fence func(ctx context.Context) error

type fenceKey struct{}

// WithFence returns ctx whose calls pass fence before each is sent.
func WithFence(ctx context.Context, fence Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, fence)
}

// FenceStage is the stage next to the backend: a call whose context
// carries a [Fence] is sent only once the fence let it through, so that a
// replica that lost its task (frozen past its lease, say) makes no further
// call for it.
func FenceStage() Stage {
	return func(next Caller) Caller {
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			if fence, _ := ctx.Value(fenceKey{}).(Fence); fence != nil {
				if err := fence(ctx); err != nil {
					return nil, errorf(CodeLeaseLost, "%s was not sent: %v", c.Name(), err)
				}
			}
			return next.Call(ctx, c)
		})
	}
}
