// Package logsite writes log lines from hot call sites: a [Site] looks its
// source (file, line, function) up once, where [slog.Logger.LogAttrs] walks
// the stack for it on every line, about half of a line's cost when the
// handler is cheap.
package logsite

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"
)

// Site is one place in the code that logs. Declare one per call site (a
// package-level variable); its zero value is ready to use. A Site used from
// two places reports the first one's source for both.
type Site struct{ pc atomic.Uintptr }

// Log writes the record l.LogAttrs(ctx, level, msg, attrs...) would, with
// the same source (the caller of Log), when l is enabled for level.
func (s *Site) Log(ctx context.Context, l *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	if !l.Enabled(ctx, level) {
		return
	}
	pc := s.pc.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(2, pcs[:]) // skip runtime.Callers and Log
		pc = pcs[0]
		s.pc.Store(pc)
	}
	r := slog.NewRecord(time.Now(), level, msg, pc)
	r.AddAttrs(attrs...)
	_ = l.Handler().Handle(ctx, r) // as LogAttrs: a handler's error is dropped
}
