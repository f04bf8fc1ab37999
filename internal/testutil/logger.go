package testutil

import (
	"log/slog"
	"strings"
	"testing"
)

// QuietLogger keeps a test's log in memory and prints it only if the test
// fails. A data race reported in it (a sandbox worker's stderr is logged)
// fails the test.
func QuietLogger(t testing.TB) *slog.Logger {
	buf := &Buffer{}
	t.Cleanup(func() {
		if strings.Contains(buf.String(), "DATA RACE") {
			t.Error("a sandbox worker reported a data race")
		}
		if t.Failed() {
			t.Logf("log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
