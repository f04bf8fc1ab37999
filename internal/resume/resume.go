// Package resume makes a stateful HTTP session's event streams resumable
// (SEP-1699, protocol 2025-11-25): a bounded store of their events and the
// retry field that starts every POST event stream.
package resume

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resumable streams (SEP-1699, protocol 2025-11-25). A stateful HTTP
// session's events are kept in a bounded memory store, so a client whose
// POST stream drops mid-call reconnects with GET and Last-Event-ID and
// receives what it missed (the go-sdk replays from the store). Every POST
// stream of such a client starts with a priming event (an id, no data;
// clients of 2026-07-28, where resumption is gone, get none). Every POST
// event stream, stateless ones too, first carries the retry field, which
// tells the client how long to wait before reconnecting.

// resumeStoreBytes bounds the events kept for resumption, over all
// sessions, with what keeping them costs (see resumeStore): past it the
// oldest are dropped (a client that reconnects for them gets an error from
// the go-sdk and retries its request).
const resumeStoreBytes = 10 << 20

// reconnectAfter is the retry field of priming events: the milliseconds a
// client waits before reconnecting a dropped stream.
const reconnectAfter = 1000

// NewStore returns the event store of stateful HTTP serving.
func NewStore() mcp.EventStore {
	return newResumeEventStore(resumeStoreBytes)
}

// RetryFirst starts every POST response that is an event stream with the
// retry field (an SSE block with no data: clients take the field and see
// no event), so a client whose stream drops knows when to reconnect.
func RetryFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&retryWriter{ResponseWriter: w}, r)
	})
}

// retryWriter writes the retry field before the first bytes of an event
// stream.
type retryWriter struct {
	http.ResponseWriter
	started bool
}

var retryField = []byte("retry: " + strconv.Itoa(reconnectAfter) + "\n\n")

// Write implements http.ResponseWriter.
func (rw *retryWriter) Write(b []byte) (int, error) {
	if !rw.started {
		rw.started = true
		if strings.HasPrefix(rw.Header().Get("Content-Type"), "text/event-stream") {
			if _, err := rw.ResponseWriter.Write(retryField); err != nil {
				return 0, err
			}
		}
	}
	return rw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (rw *retryWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }
