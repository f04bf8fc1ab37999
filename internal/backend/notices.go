package backend

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// noticeWait bounds how long a call's result waits for the notifications
// the backend sent before it (see notices).
const noticeWait = 2 * time.Second

// notices counts the progress and log notifications a connection has read
// and those whose handler has finished. The go-sdk reads a backend's
// messages in order but runs notification handlers from a queue of their
// own, while a response completes its call at once: without a wait, a
// result can overtake the progress the backend sent just before it, and the
// gateway would forward that progress after the result, or drop it. A call
// takes a mark once its response is in (every notification sent before it
// has been read by then) and waits until the handlers have caught up.
//
// Only connections the gateway wraps are counted (every transport but
// streamable HTTP, whose connection the SDK needs unwrapped); on the
// others mark is always 0 and nothing waits.
type notices struct {
	mu      sync.Mutex
	read    uint64
	handled uint64
	wake    chan struct{} // closed and replaced when handled grows
}

// forwarded reports the notifications counted: those the gateway forwards
// to clients.
func forwarded(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && !req.ID.IsValid() && (req.Method == "notifications/progress" || req.Method == "notifications/message")
}

func (n *notices) noteRead() {
	n.mu.Lock()
	n.read++
	n.mu.Unlock()
}

func (n *notices) noteHandled() {
	n.mu.Lock()
	n.handled++
	if n.wake != nil {
		close(n.wake)
		n.wake = nil
	}
	n.mu.Unlock()
}

// mark is the number of notifications read so far.
func (n *notices) mark() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.read
}

// await returns once the handlers have finished the first mark
// notifications, ctx ends or noticeWait has passed.
func (n *notices) await(ctx context.Context, mark uint64) {
	var timeout <-chan time.Time
	for {
		n.mu.Lock()
		if n.handled >= mark {
			n.mu.Unlock()
			return
		}
		if n.wake == nil {
			n.wake = make(chan struct{})
		}
		wake := n.wake
		n.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(noticeWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-timeout:
			return
		}
	}
}
