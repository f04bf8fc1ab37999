package desk

import (
	"context"
	"log/slog"
	"strings"
	"time"
)

// Event is one audit event: a tool call or a program run of a principal,
// as logged with the message "audit".
type Event struct {
	Time time.Time
	// Kind is the event attribute: "tool_call" or "program_run".
	Kind      string
	Principal string
	// Tool is the called tool (tool_call), or the tools a run called.
	Tool    string
	Outcome string
	// DurationMS is how long the call or run took.
	DurationMS int64
	// Run is the run record's id, if any.
	Run string
}

// AuditHandler returns a log handler that passes every record to next and
// keeps the audit events ("audit" records) on the desk. A nil desk returns
// next.
func (d *Desk) AuditHandler(next slog.Handler) slog.Handler {
	if d == nil {
		return next
	}
	return auditHandler{d: d, next: next}
}

type auditHandler struct {
	d     *Desk
	next  slog.Handler
	attrs []slog.Attr
}

func (h auditHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h auditHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "audit" {
		h.d.keepEvent(r, h.attrs)
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h auditHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return auditHandler{d: h.d, next: h.next.WithAttrs(attrs), attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], attrs...)}
}

func (h auditHandler) WithGroup(name string) slog.Handler {
	return auditHandler{d: h.d, next: h.next.WithGroup(name), attrs: h.attrs}
}

func (d *Desk) keepEvent(r slog.Record, attrs []slog.Attr) {
	e := Event{Time: r.Time}
	set := func(a slog.Attr) bool {
		switch a.Key {
		case "event":
			e.Kind = a.Value.String()
		case "principal":
			e.Principal = a.Value.String()
		case "tool":
			e.Tool = a.Value.String()
		case "tools":
			if tools, ok := a.Value.Any().([]string); ok {
				e.Tool = strings.Join(tools, ", ")
			}
		case "outcome":
			e.Outcome = a.Value.String()
		case "duration_ms":
			e.DurationMS = a.Value.Int64()
		case "run":
			e.Run = a.Value.String()
		}
		return true
	}
	for _, a := range attrs {
		set(a)
	}
	r.Attrs(set)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events.add(e)
}

// EventFilter selects audit events; empty fields match everything.
type EventFilter struct {
	Principal string
	Kind      string
	// Text must occur in the tool or outcome.
	Text string
	// Limit bounds the events returned (0: all kept).
	Limit int
}

// Events lists the kept audit events that f selects, newest first.
func (d *Desk) Events(f EventFilter) []Event {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	all := d.events.newest()
	d.mu.Unlock()
	out := all[:0]
	for _, e := range all {
		if (f.Principal != "" && e.Principal != f.Principal) || (f.Kind != "" && e.Kind != f.Kind) ||
			(f.Text != "" && !strings.Contains(e.Tool, f.Text) && !strings.Contains(e.Outcome, f.Text)) {
			continue
		}
		out = append(out, e)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}
