package pipeline

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StatsSink receives one entry per backend call (e.g. *stats.Counters).
type StatsSink interface {
	ToolCall(name string, bytes int, took time.Duration, err error)
}

// StatsStage counts every call that reaches the backend: its result size,
// time and error. A tool result with isError counts as an error.
func StatsStage(s StatsSink) Stage {
	return func(next Caller) Caller {
		if s == nil {
			return next
		}
		return CallerFunc(func(ctx context.Context, c *Call) (*mcp.CallToolResult, error) {
			start := time.Now()
			res, err := next.Call(ctx, c)
			counted := err
			if counted == nil && res != nil && res.IsError {
				counted = toolError{}
			}
			s.ToolCall(c.Name(), resultSize(res), time.Since(start), counted)
			return res, err
		})
	}
}

type toolError struct{}

func (toolError) Error() string { return "the tool reported an error" }

// resultSize approximates the bytes a result carries: its text, binary data
// and resource contents.
func resultSize(res *mcp.CallToolResult) int {
	if res == nil {
		return 0
	}
	n := 0
	for _, c := range res.Content {
		switch b := c.(type) {
		case *mcp.TextContent:
			n += len(b.Text)
		case *mcp.ImageContent:
			n += len(b.Data)
		case *mcp.AudioContent:
			n += len(b.Data)
		case *mcp.EmbeddedResource:
			if b.Resource != nil {
				n += len(b.Resource.Text) + len(b.Resource.Blob)
			}
		}
	}
	return n
}
