package logsite

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
)

var testSite Site

// logHere logs through testSite and returns the line it logs from: the
// source every record must name, on the first call (looked up) and on
// later ones (reused).
func logHere(l *slog.Logger, n int) (line int) {
	_, _, line, _ = runtime.Caller(0)
	testSite.Log(context.Background(), l, slog.LevelInfo, "hello", slog.Int("n", n))
	return line + 1
}

// TestSiteWritesWhatLogAttrsWould: the same JSON as LogAttrs from the same
// place, but for the time, on the first and the later lines.
func TestSiteWritesWhatLogAttrsWould(t *testing.T) {
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{AddSource: true, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		if src, ok := a.Value.Any().(*slog.Source); ok {
			// compared apart below: the two calls are in different places
			return slog.String(slog.SourceKey, src.File)
		}
		return a
	}}
	gl, wl := slog.New(slog.NewJSONHandler(&got, opts)), slog.New(slog.NewJSONHandler(&want, opts))
	for n := range 3 {
		logHere(gl, n)
		wl.LogAttrs(context.Background(), slog.LevelInfo, "hello", slog.Int("n", n))
	}
	if got.String() != want.String() {
		t.Fatalf("Site wrote\n%s\nLogAttrs wrote\n%s", got.String(), want.String())
	}
	var sources bytes.Buffer
	sl := slog.New(slog.NewJSONHandler(&sources, &slog.HandlerOptions{AddSource: true}))
	var logHereLine int
	for n := range 3 {
		logHereLine = logHere(sl, n)
	}
	for _, line := range strings.Split(strings.TrimSpace(sources.String()), "\n") {
		var rec struct{ Source slog.Source }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Source.Function != "github.com/isogate/isogate/internal/logsite.logHere" ||
			!strings.HasSuffix(rec.Source.File, "logsite_test.go") || rec.Source.Line != logHereLine {
			t.Fatalf("source of %s (want logHere, line %d): %v", line, logHereLine, err)
		}
	}
}

// TestSiteSkipsDisabledLevels: nothing reaches the handler below its level.
func TestSiteSkipsDisabledLevels(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var s Site
	s.Log(context.Background(), l, slog.LevelInfo, "dropped")
	if buf.Len() != 0 {
		t.Fatalf("an INFO line reached a WARN handler: %s", buf.String())
	}
}

// BenchmarkLine compares a line through a Site with the same line through
// LogAttrs, the handler writing text without its source (the gateway's default) to nowhere.
func BenchmarkLine(b *testing.B) {
	l := slog.New(slog.NewTextHandler(io.Discard, nil))
	attrs := []slog.Attr{slog.String("tool", "echo"), slog.Int("n", 1)}
	b.Run("site", func(b *testing.B) {
		var s Site
		for b.Loop() {
			s.Log(context.Background(), l, slog.LevelInfo, "backend tool call", attrs...)
		}
	})
	b.Run("LogAttrs", func(b *testing.B) {
		for b.Loop() {
			l.LogAttrs(context.Background(), slog.LevelInfo, "backend tool call", attrs...)
		}
	})
}
