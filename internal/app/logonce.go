package app

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// onceMessages are the log messages that several parts of one gateway
// write alike (each sandbox pool, code mode's and run_code's, reports the
// confinement its workers obtained; on one host they obtain the same):
// written once per distinct content.
var onceMessages = map[string]bool{"sandbox confinement": true}

// onceHandler passes records on, except a record of onceMessages whose
// message and attributes were written already through any handler that
// shares seen.
type onceHandler struct {
	next  slog.Handler
	attrs string // the attributes added by WithAttrs/WithGroup, rendered
	seen  *sync.Map
}

// logOnce returns a logger that writes each distinct record of
// onceMessages once, however many loggers derived from it write it.
func logOnce(l *slog.Logger) *slog.Logger {
	return slog.New(onceHandler{next: l.Handler(), seen: &sync.Map{}})
}

func (h onceHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h onceHandler) Handle(ctx context.Context, r slog.Record) error {
	if onceMessages[r.Message] {
		var key strings.Builder
		key.WriteString(r.Message + h.attrs)
		r.Attrs(func(a slog.Attr) bool { key.WriteString(" " + a.String()); return true })
		if _, dup := h.seen.LoadOrStore(key.String(), true); dup {
			return nil
		}
	}
	return h.next.Handle(ctx, r)
}

func (h onceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	s := h.attrs
	for _, a := range attrs {
		s += " " + a.String()
	}
	return onceHandler{next: h.next.WithAttrs(attrs), attrs: s, seen: h.seen}
}

func (h onceHandler) WithGroup(name string) slog.Handler {
	return onceHandler{next: h.next.WithGroup(name), attrs: h.attrs + " " + name + ":", seen: h.seen}
}
