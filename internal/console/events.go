package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// refreshEvery is how often a page's live part is rendered again when
// nothing on the desk signals a change (backends, stderr, counters).
const refreshEvery = time.Second

// events streams a page's live part as server-sent events: "live" events
// carry the part's HTML (rendered and escaped by the page's template),
// sent when it changed; the metrics page gets "sample" events (JSON).
func (c *Console) events(w http.ResponseWriter, r *http.Request, v *visitor) {
	page := r.URL.Query().Get("page")
	if !slices.Contains(pageNames, page) && page != "record" { // a run's page: live while it runs
		http.Error(w, "unknown page", http.StatusBadRequest)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	// The page's own query (its filters) rides in the "q" parameter.
	inner := r.Clone(r.Context())
	inner.URL.RawQuery = r.URL.Query().Get("q")
	var last []byte
	made := -1
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	changed := func() <-chan struct{} { return c.src.Desk.Changed() }
	if page == "metrics" { // the point in progress every second, whatever happens on the desk
		changed = func() <-chan struct{} { return nil }
	}
	for {
		if page == "metrics" {
			// The history when it gained a point (and first), else only
			// the point in progress.
			series, n := c.metricsSeries()
			if n != made {
				made = n
				b, _ := json.Marshal(series)
				fmt.Fprintf(w, "event: history\ndata: %s\n\n", b)
			} else {
				b, _ := json.Marshal(series.Tail)
				fmt.Fprintf(w, "event: tail\ndata: %s\n\n", b)
			}
			flusher.Flush()
		} else {
			data, err := c.gather(page, inner)
			if err != nil {
				return
			}
			var buf bytes.Buffer
			if err := c.pages.renderLive(&buf, page, c.view(page, inner, v, data)); err != nil {
				return
			}
			if !bytes.Equal(buf.Bytes(), last) {
				last = buf.Bytes()
				writeEvent(w, "live", buf.String())
				flusher.Flush()
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-changed():
		case <-tick.C:
		}
	}
}

// lineBreaks are what end a line of an event stream: "\r\n", "\r" and
// "\n" (the HTML they carry reads "\r" and "\r\n" as "\n" too).
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// writeEvent writes one server-sent event of type name carrying data, one
// "data:" line per line of data: a "\r" in data (a principal's name, a
// backend's text) is a line break like "\n", so it cannot end the event
// early or start a forged one ("\r\revent: live\rdata: …").
func writeEvent(w io.Writer, name, data string) {
	var b strings.Builder
	b.WriteString("event: " + name + "\n")
	for _, line := range strings.Split(lineBreaks.Replace(data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
