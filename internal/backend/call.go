package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/internal/fairshare"
	"github.com/isogate/isogate/internal/jsonrpcio"
)

// call routes one tool call. If the connection turns out to be dead before
// the request could be delivered, the call is retried once on the next
// connection (waiting up to StartWait for it).
func (b *backend) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		c, err := b.session(ctx)
		if err != nil {
			return nil, err
		}
		// The SDK mutates params (arguments, _meta) per session: copy.
		p := *params
		p.Meta = cloneMeta(params.Meta)
		if t, ok := ctx.Value(progressKey{}).(string); ok && p.Meta["progressToken"] == nil {
			if p.Meta == nil {
				p.Meta = mcp.Meta{}
			}
			p.Meta["progressToken"] = t
		}
		if noArguments(p.Arguments) {
			p.Arguments = nil // the SDK sends {} instead of null
		}
		res, err, retry := b.callOnce(ctx, c, &p)
		if retry && attempt == 0 {
			b.log.Info("connection was dead before the call was sent; retrying on the next connection",
				slog.String("tool", params.Name), slog.Any("error", err))
			continue
		}
		return res, err
	}
}

// principalKey is the fair-share key of the caller: its principal's owner
// key, "" without authentication (everything is then one principal).
func principalKey(ctx context.Context) string {
	if p := authn.FromContext(ctx); p != nil {
		return p.Owner()
	}
	return ""
}

// noArguments reports argument values that would marshal to JSON null.
func noArguments(args any) bool {
	switch a := args.(type) {
	case nil:
		return true
	case json.RawMessage:
		return len(bytes.TrimSpace(a)) == 0 || string(bytes.TrimSpace(a)) == "null"
	case map[string]any:
		return a == nil
	}
	return false
}

func cloneMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// callOnce performs one call on c. retry reports that the request was
// certainly not delivered because the connection was already dead.
func (b *backend) callOnce(ctx context.Context, c *conn, p *mcp.CallToolParams) (_ *mcp.CallToolResult, _ error, retry bool) {
	name, tool, timeout := b.spec.Name, p.Name, b.spec.Timeout
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel) // connection torn down: abort
	defer stop()

	release, err := b.sem.Acquire(tctx, principalKey(ctx))
	if err != nil {
		var share *fairshare.ShareError
		if errors.As(err, &share) && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("backend %q: tool %q: waited %v for a call slot: %w", name, tool, timeout, share), false
		}
		return nil, b.callError(ctx, tctx, c, tool, fmt.Errorf("waiting for a free call slot: %w", tctx.Err())), false
	}
	// A connection that died since it was handed out cannot deliver the
	// request: the call goes to the next one.
	if !c.alive() || c.proc.gone() {
		release()
		if c.markBroken(errors.New("the backend process is gone")) {
			poke(b.kick)
		}
		return nil, fmt.Errorf("backend %q: tool %q: %w: the connection had ended", name, tool, ErrConnectionLost), true
	}
	// What the backend asks or logs during the call goes to its caller
	// when it is the only one with calls in flight (attribution.go); what
	// it logged before the call is attributed without it.
	c.notices.await(tctx, c.notices.mark())
	defer c.enter(callerFrom(ctx))()
	// The slot is released when the SDK call really returns, not when we
	// give up on it, so a wedged backend cannot accumulate unbounded calls.
	res, err := inBackground(tctx, func(ctx context.Context) (*mcp.CallToolResult, error) {
		defer release()
		return b.send(ctx, c, p)
	})
	if err == nil {
		// Progress and log messages sent before the result reach the
		// client before it (notices.go).
		c.notices.await(tctx, c.notices.mark())
		return res, nil, false
	}
	// Whether or not the supervisor has torn the connection down meanwhile,
	// an error proving non-delivery makes the call safe to retry.
	if ctx.Err() == nil && !errors.Is(tctx.Err(), context.DeadlineExceeded) && notDelivered(err) {
		if c.markBroken(err) {
			poke(b.kick)
		}
		return nil, fmt.Errorf("backend %q: tool %q: %w: %w", name, tool, ErrConnectionLost, err), true
	}
	return nil, b.callError(ctx, tctx, c, tool, err), false
}

// callError classifies a failed call.
func (b *backend) callError(ctx, tctx context.Context, c *conn, tool string, err error) error {
	name := b.spec.Name
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("backend %q: tool %q: %w", name, tool, ctx.Err())
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return timeoutError(name, tool, b.spec.Timeout, context.DeadlineExceeded)
	case errors.Is(err, jsonrpcio.ErrFrameTooLarge):
		// The reader stops at a message it will not hold: the connection
		// is over (marked so now, so that the next call waits for the
		// restarted backend instead of meeting this one's end).
		if c.markBroken(err) {
			poke(b.kick)
		}
		return fmt.Errorf("backend %q: tool %q: %w: its answer was larger than %d MiB, the most isogate reads from a stdio backend in one message (ask it for less: a range, a page, a filter)",
			name, tool, ErrConnectionLost, maxStdioFrame>>20)
	case c.ctx.Err() != nil:
		if b.m.isClosed() {
			return fmt.Errorf("backend %q: tool %q: %w", name, tool, ErrClosed)
		}
		return fmt.Errorf("backend %q: tool %q: %w: %s", name, tool, ErrConnectionLost, b.lastError())
	case isConnectionFailure(err) || !c.alive():
		return fmt.Errorf("backend %q: tool %q: %w: %w", name, tool, ErrConnectionLost, err)
	}
	return fmt.Errorf("backend %q: tool %q: %w", name, tool, err)
}

// notDelivered reports errors that prove a request never reached the
// backend: the SDK refused to send on a connection that was already closing,
// or writing to a stdio child failed with EPIPE (the child is gone; reads
// never fail with EPIPE). Ambiguous errors, such as a closed pipe, which may
// also come from the read side after the request was sent, do not qualify.
func notDelivered(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE)
}

// isConnectionFailure reports transport-level errors (as opposed to error
// responses from the backend).
func isConnectionFailure(err error) bool {
	return notDelivered(err) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, os.ErrClosed) ||
		errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET)
}
