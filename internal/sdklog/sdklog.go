// Package sdklog adapts the gateway's logger for the MCP SDK, whose session
// lifecycle messages ("server session connected", "session initialized",
// ...) are routine chatter: they are logged one level lower, INFO as DEBUG.
package sdklog

import (
	"context"
	"log/slog"
)

// Demote returns a logger that writes to l's handler with INFO records
// lowered to DEBUG. Warnings and errors keep their level.
func Demote(l *slog.Logger) *slog.Logger {
	return slog.New(demoted{l.Handler()})
}

type demoted struct{ inner slog.Handler }

func lower(level slog.Level) slog.Level {
	if level == slog.LevelInfo {
		return slog.LevelDebug
	}
	return level
}

// Enabled implements slog.Handler.
func (h demoted) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, lower(level))
}

// Handle implements slog.Handler.
func (h demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return h.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h demoted) WithAttrs(attrs []slog.Attr) slog.Handler { return demoted{h.inner.WithAttrs(attrs)} }

// WithGroup implements slog.Handler.
func (h demoted) WithGroup(name string) slog.Handler { return demoted{h.inner.WithGroup(name)} }
