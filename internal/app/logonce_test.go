package app

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/testutil"
)

// TestLogOnce: the confinement two sandbox pools report alike is written
// once (issue 33, 6: `make run` printed it twice); a different one, and
// other messages, are written each time.
func TestLogOnce(t *testing.T) {
	var buf testutil.Buffer
	l := logOnce(slog.New(slog.NewTextHandler(&buf, nil)))
	codeMode, runCode := l.With("component", "procpool"), l.With("component", "procpool")
	codeMode.Info("sandbox confinement", "mode", "best-effort", slog.Group("seccomp", "level", "on"))
	runCode.Info("sandbox confinement", "mode", "best-effort", slog.Group("seccomp", "level", "on"))
	runCode.Info("sandbox confinement", "mode", "best-effort", slog.Group("seccomp", "level", "off"))
	runCode.Info("other")
	runCode.Info("other")
	log := buf.String()
	if n := strings.Count(log, "sandbox confinement"); n != 2 {
		t.Errorf("%d confinement lines, want 2 (one per distinct report):\n%s", n, log)
	}
	if n := strings.Count(log, "msg=other"); n != 2 {
		t.Errorf("%d other lines, want 2:\n%s", n, log)
	}
}
