package surface

import (
	"context"
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/jsonrpcio"
)

// stdioTransport is the client-facing stdio transport: when stdin is a pipe
// or a socket it can read through Go's poller (pollableStdin), a
// jsonrpcio.Conn on it and stdout, read in the go-sdk's reader goroutine
// without a goroutine of its own and decoded without the SDK's 32 KB
// decoder per message, where a message over the limit is answered or
// dropped and the session goes on (RecoverOversized); otherwise (a terminal, a file) the go-sdk's.
func stdioTransport(logger *slog.Logger) mcp.Transport {
	in, err := pollableStdin()
	if err != nil {
		return &mcp.StdioTransport{}
	}
	return connTransport{jsonrpcio.NewConn(in, os.Stdout, mcp.DefaultMaxLineLength, in.Close).RecoverOversized(logger)}
}

// connTransport is a transport whose one connection already exists.
type connTransport struct{ conn mcp.Connection }

// Connect implements mcp.Transport.
func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }
