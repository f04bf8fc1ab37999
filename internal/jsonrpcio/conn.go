package jsonrpcio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Conn is an MCP connection (it implements the go-sdk's mcp.Connection)
// over a stream of newline-delimited JSON-RPC messages. Read reads in its
// caller's goroutine (the go-sdk's one reader), so the stream must be one
// that closing unblocks: a pipe or socket in Go's poller, or a child's
// stdout that ends with it. As the go-sdk's stdio connection does, it
// answers a batch of requests with one batch of their responses, written
// once the last of them is.
type Conn struct {
	r     *Reader
	w     io.Writer
	close func() error

	writeMu sync.Mutex // one message written at a time

	queue []jsonrpc.Message // the rest of the batch being read; the reader's own

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*batch // a request read in a batch → that batch

	closeOnce sync.Once
	closeErr  error

	oversized *slog.Logger // set by RecoverOversized: skip messages over the limit
}

// batch gathers the responses to a batch of requests.
type batch struct {
	index     map[jsonrpc.ID]int // requests not yet answered → their place
	responses []*jsonrpc.Response
}

// NewConn returns a connection reading messages of at most maxFrame bytes
// (no limit when maxFrame <= 0) from r and writing to w; Close calls close
// (once).
func NewConn(r io.Reader, w io.Writer, maxFrame int, close func() error) *Conn {
	return &Conn{r: NewReader(r, maxFrame), w: w, close: close}
}

// SessionID implements mcp.Connection: a stream has no session id.
func (c *Conn) SessionID() string { return "" }

// Read implements mcp.Connection. A stream closed by Close reads as io.EOF.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	msgs, isBatch, err := c.r.ReadFrame()
	for skipped := (*FrameTooLargeError)(nil); c.oversized != nil && errors.As(err, &skipped); {
		if err := c.refuseOversized(ctx, skipped); err != nil {
			return nil, err
		}
		msgs, isBatch, err = c.r.ReadFrame()
	}
	if errors.Is(err, os.ErrClosed) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, err
	}
	if isBatch {
		if err := c.track(msgs); err != nil {
			return nil, err
		}
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// track records the requests of a batch read, to answer them together.
func (c *Conn) track(msgs []jsonrpc.Message) error {
	var b *batch
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			continue
		}
		if b == nil {
			b = &batch{index: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.index[req.ID]; dup {
			return fmt.Errorf("duplicate message ID %q", req.ID)
		}
		b.index[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.index {
		if _, seen := c.batches[id]; seen {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return nil
}

// settle files a response to a request read in a batch. inBatch reports
// whether it was one; all is the batch's responses once resp was the last.
func (c *Conn) settle(resp *jsonrpc.Response) (all []*jsonrpc.Response, inBatch bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	b.responses[b.index[resp.ID]] = resp
	delete(b.index, resp.ID)
	if len(b.index) > 0 {
		return nil, true
	}
	return b.responses, true
}

// Write implements mcp.Connection: one write of the message and its
// newline (of the whole batch, for the last response of a batch).
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if all, inBatch := c.settle(resp); inBatch {
			if all == nil {
				return nil
			}
			data, err = encodeBatch(all)
		} else {
			data, err = Encode(msg)
		}
	} else {
		data, err = Encode(msg)
	}
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(data)
	return err
}

// encodeBatch returns the wire form of responses as one JSON array line.
func encodeBatch(responses []*jsonrpc.Response) ([]byte, error) {
	raws := make([]json.RawMessage, len(responses))
	for i, r := range responses {
		raw, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, fmt.Errorf("encoding batch message: %w", err)
		}
		raws[i] = raw
	}
	data, err := json.Marshal(raws)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Close implements mcp.Connection: it calls the close function given to
// NewConn, once, and returns its error every time.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}
