package resume

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replay collects what a store replays of a stream after index.
func replay(s mcp.EventStore, session, stream string, index int) ([]string, error) {
	var out []string
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

// liveHeap collects garbage and returns the bytes of live heap objects.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// A long-lived session's POST streams do not pile up: 50 000 streams of a
// priming event and one answer each (50 000 tool calls) leave the store
// within its budget in the Go heap. The go-sdk's MemoryEventStore (the
// store before) kept every stream until the session closed: some 8 MB
// here, against a budget of 64 kB.
func TestResumeStoreForgetsOldStreams(t *testing.T) {
	const budget, calls = 64 << 10, 50000
	ctx := context.Background()
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"42"}]}}`)
	var s mcp.EventStore = newResumeEventStore(budget)
	before := liveHeap()
	for i := range calls {
		stream := fmt.Sprintf("stream-%d", i)
		if err := s.Open(ctx, "session-1", stream); err != nil {
			t.Fatal(err)
		}
		for _, d := range [][]byte{nil, answer} { // priming event, then the answer
			if err := s.Append(ctx, "session-1", stream, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	grown := liveHeap() - before
	runtime.KeepAlive(s)
	t.Logf("%d streams: the heap grew %d bytes (budget %d)", calls, grown, budget)
	// A megabyte of slack for whatever else the test binary holds.
	if grown > budget+1<<20 {
		t.Fatalf("%d streams left the heap %d bytes larger, over the store's budget of %d and a megabyte", calls, grown, budget)
	}
	// The newest stream is replayed in full, the oldest is gone.
	last := fmt.Sprintf("stream-%d", calls-1)
	if got, err := replay(s, "session-1", last, 0); err != nil || len(got) != 1 || got[0] != string(answer) {
		t.Fatalf("the newest stream after its priming event: %q, %v", got, err)
	}
	if _, err := replay(s, "session-1", "stream-0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("the oldest stream: %v, want ErrEventsPurged", err)
	}
}

// Replay follows the stream's indexes: events after the one the client
// last received, an error once one of them was dropped, and an error for
// a stream forgotten while still in use (its later events are not
// replayed as if they were its first).
func TestResumeStoreReplay(t *testing.T) {
	ctx := context.Background()
	big := make([]byte, 1000)
	// Room for two large events, two streams and a few small events.
	s := newResumeEventStore(2*(1000+resumeEventCost+resumeStreamCost) + 100)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Open(ctx, "a", "1"))
	for _, d := range []string{"", "e1", "e2"} {
		must(s.Append(ctx, "a", "1", []byte(d)))
	}
	if got, err := replay(s, "a", "1", 0); err != nil || fmt.Sprint(got) != "[e1 e2]" {
		t.Fatalf("after 0: %q, %v", got, err)
	}
	if got, err := replay(s, "a", "1", 2); err != nil || len(got) != 0 {
		t.Fatalf("after the last: %q, %v", got, err)
	}
	// A second stream's large events push the first one's out.
	must(s.Open(ctx, "a", "2"))
	for range 3 {
		must(s.Append(ctx, "a", "2", big))
	}
	if _, err := replay(s, "a", "1", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("stream 1 after its events were dropped: %v", err)
	}
	// Stream 1 goes on: its new event is not replayed at index 0.
	must(s.Append(ctx, "a", "1", []byte("e3")))
	if got, err := replay(s, "a", "1", 2); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("stream 1 resumed after its record was dropped: %q, %v", got, err)
	}
	// Stream 2 lost its first event (over budget), keeps its newest.
	if _, err := replay(s, "a", "2", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Fatalf("stream 2 from its start: %v", err)
	}
	if got, err := replay(s, "a", "2", 1); err != nil || len(got) != 1 {
		t.Fatalf("stream 2 after event 1: %d events, %v", len(got), err)
	}
	// The standalone stream (id "") keeps its index when its events are
	// dropped: it is resumed after them.
	must(s.Open(ctx, "a", ""))
	must(s.Append(ctx, "a", "", []byte("n0")))
	for range 3 {
		must(s.Append(ctx, "a", "3", big))
	}
	must(s.Append(ctx, "a", "", []byte("n1")))
	if got, err := replay(s, "a", "", 0); err != nil || fmt.Sprint(got) != "[n1]" {
		t.Fatalf("standalone stream after its dropped event: %q, %v", got, err)
	}
	must(s.SessionClosed(ctx, "a"))
	if _, err := replay(s, "a", "2", 1); err == nil {
		t.Fatal("a closed session's stream is replayed")
	}
	if s.bytes != 0 || s.order.Len() != 0 || len(s.sessions) != 0 {
		t.Fatalf("after the session closed: %d bytes, %d streams, %d sessions", s.bytes, s.order.Len(), len(s.sessions))
	}
}

// What the store charges is what it holds: with room for everything,
// 50 000 streams of a priming event and an answer grow the Go heap by what
// the store counts, within a fifth.
func TestResumeStoreChargesWhatItHolds(t *testing.T) {
	const calls = 50000
	ctx := context.Background()
	s := newResumeEventStore(1 << 30)
	ids := make([]string, calls)
	for i := range ids {
		ids[i] = fmt.Sprintf("stream-%d", i)
	}
	before := liveHeap()
	for _, stream := range ids {
		_ = s.Open(ctx, "session-1", stream)
		_ = s.Append(ctx, "session-1", stream, nil)
		_ = s.Append(ctx, "session-1", stream, make([]byte, 300)) // the go-sdk hands each event its own buffer
	}
	grown := liveHeap() - before
	ratio := float64(grown) / float64(s.bytes)
	t.Logf("%d streams: the heap grew %d bytes, the store counts %d (×%.2f)", calls, grown, s.bytes, ratio)
	if ratio < 0.8 || ratio > 1.2 {
		t.Fatalf("the heap grew ×%.2f what the store counts (want within 0.8–1.2)", ratio)
	}
}
