package sdklog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestDemote(t *testing.T) {
	var buf bytes.Buffer
	l := Demote(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Info("chatter")
	l.With("k", "v").Warn("problem")
	if out := buf.String(); strings.Contains(out, "chatter") || !strings.Contains(out, "level=WARN msg=problem k=v") {
		t.Fatalf("at INFO: %q", out)
	}
	buf.Reset()
	Demote(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))).Info("chatter")
	if out := buf.String(); !strings.Contains(out, "level=DEBUG msg=chatter") {
		t.Fatalf("at DEBUG: %q", out)
	}
}
