package console

import (
	"strings"
	"testing"
)

// sseEvent is one event as a browser's EventSource reads it.
type sseEvent struct{ typ, data string }

// parseSSE reads an event stream as the HTML standard does: a line ends at
// "\r\n", "\r" or "\n"; a blank line dispatches the event.
func parseSSE(s string) []sseEvent {
	var out []sseEvent
	typ, data, has := "", []string(nil), false
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break // an unfinished line is never dispatched
		}
		line := s[:i]
		if strings.HasPrefix(s[i:], "\r\n") {
			s = s[i+2:]
		} else {
			s = s[i+1:]
		}
		if line == "" {
			if has {
				out = append(out, sseEvent{typ, strings.Join(data, "\n")})
			}
			typ, data, has = "", nil, false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			typ = value
		case "data":
			data, has = append(data, value), true
		}
	}
	return out
}

// TestWriteEventLineBreaks: text carrying "\r" (a principal's name, a
// backend's text) stays inside its event: it neither ends the event early
// nor starts a forged one.
func TestWriteEventLineBreaks(t *testing.T) {
	html := "<td>bob\r\revent: live\rdata: FORGED\r\n\r\n</td>\n<td>x\r\n</td>"
	var b strings.Builder
	writeEvent(&b, "live", html)
	got := parseSSE(b.String())
	want := sseEvent{"live", "<td>bob\n\nevent: live\ndata: FORGED\n\n</td>\n<td>x\n</td>"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("the stream %q reads as %q, want one event %q", b.String(), got, want)
	}
}
