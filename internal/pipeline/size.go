package pipeline

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ResultSize approximates the bytes a result carries: its text, binary data
// and resource contents.
func ResultSize(res *mcp.CallToolResult) int {
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
