package resume

import (
	"container/list"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resumeStore is the event store of resumable HTTP streams: the go-sdk's
// MemoryEventStore bounds the bytes of the events it keeps but never
// forgets a stream before its session closes, and every POST is a stream
// of its own: a session that lives through 100 000 tool calls kept 100 000
// streams (their map entries, their lists and the priming event, which
// counts no bytes and so is never purged). resumeStore charges each stream
// and each event what it holds in memory, and past its budget drops the
// oldest streams' events first and forgets a stream once it holds none.
//
// A session's standalone stream (id "", its GET stream of server
// notifications, which lives as long as the session) is never forgotten,
// only its old events dropped. A request's stream forgotten while still in
// use (its next event comes after) is kept again as one whose earlier
// events are lost: a client asking to resume it gets an error (the go-sdk
// answers 400, as for purged events) and retries its request; no event is
// ever replayed at a wrong index.
type resumeStore struct {
	maxBytes int

	mu       sync.Mutex
	bytes    int                                 // charged for what is held
	order    *list.List                          // of *resumeStream, oldest first
	sessions map[string]map[string]*list.Element // session → stream id → in order
}

// resumeStream is the events kept of one stream.
type resumeStream struct {
	session, id string
	first       int      // the stream index of data[0]
	data        [][]byte // events from index first on
	lost        bool     // events were dropped with the stream: no index is known
	charged     int      // what it is charged, its events included
}

// Costs charged beyond the bytes of events (their capacity), for what the
// store holds to keep them: a stream's record (80 bytes), its list element
// (48) and map entry (about 48; its id and session are charged by length on
// top), and an event's slice header with the list's spare capacity.
// Measured by TestResumeStoreChargesWhatItHolds.
const (
	resumeStreamCost = 176
	resumeEventCost  = 32
)

// newResumeEventStore returns an empty store holding about maxBytes.
func newResumeEventStore(maxBytes int) *resumeStore {
	return &resumeStore{maxBytes: maxBytes, order: list.New(), sessions: map[string]map[string]*list.Element{}}
}

var _ mcp.EventStore = (*resumeStore)(nil)

// Open implements [mcp.EventStore].
func (s *resumeStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(sessionID, streamID, false)
	s.purge(st)
	return nil
}

// Append implements [mcp.EventStore].
func (s *resumeStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(sessionID, streamID, true)
	st.data = append(st.data, data)
	cost := cap(data) + resumeEventCost
	st.charged += cost
	s.bytes += cost
	s.purge(st)
	return nil
}

// After implements [mcp.EventStore].
func (s *resumeStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	events, err := s.after(sessionID, streamID, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// after copies the events of a stream after index.
func (s *resumeStore) after(sessionID, streamID string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.sessions[sessionID][streamID]
	if !ok {
		return nil, fmt.Errorf("resumable stream %q of session %q: %w", streamID, sessionID, mcp.ErrEventsPurged)
	}
	st := el.Value.(*resumeStream)
	start := index + 1 - st.first
	if st.lost || start < 0 {
		return nil, fmt.Errorf("resumable stream %q of session %q after event %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	}
	if start >= len(st.data) {
		return nil, nil
	}
	return slices.Clone(st.data[start:]), nil
}

// SessionClosed implements [mcp.EventStore].
func (s *resumeStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, el := range s.sessions[sessionID] {
		s.forget(el)
	}
	return nil
}

// stream returns the record of a stream, kept as the newest if it is new
// (lost when it is created by an event: its earlier ones were dropped).
func (s *resumeStore) stream(sessionID, streamID string, appending bool) *resumeStream {
	streams := s.sessions[sessionID]
	if el, ok := streams[streamID]; ok {
		return el.Value.(*resumeStream)
	}
	if streams == nil {
		streams = map[string]*list.Element{}
		s.sessions[sessionID] = streams
	}
	st := &resumeStream{session: sessionID, id: streamID, lost: appending,
		charged: resumeStreamCost + len(sessionID) + len(streamID)}
	streams[streamID] = s.order.PushBack(st)
	s.bytes += st.charged
	return st
}

// purge drops the oldest streams' events, oldest first, and forgets
// request streams left with none, until the store is within its budget. It keeps
// keep's newest event (and keep itself).
func (s *resumeStore) purge(keep *resumeStream) {
	for el := s.order.Front(); el != nil && s.bytes > s.maxBytes; {
		st := el.Value.(*resumeStream)
		next := el.Next()
		for len(st.data) > 0 && s.bytes > s.maxBytes && !(st == keep && len(st.data) == 1) {
			cost := cap(st.data[0]) + resumeEventCost
			st.data[0] = nil
			st.data = st.data[1:]
			st.first++
			st.charged -= cost
			s.bytes -= cost
		}
		if len(st.data) == 0 && st != keep && st.id != "" && s.bytes > s.maxBytes {
			s.forget(el)
		}
		el = next
	}
}

// forget drops a stream and what it holds.
func (s *resumeStore) forget(el *list.Element) {
	st := s.order.Remove(el).(*resumeStream)
	s.bytes -= st.charged
	streams := s.sessions[st.session]
	delete(streams, st.id)
	if len(streams) == 0 {
		delete(s.sessions, st.session)
	}
}
