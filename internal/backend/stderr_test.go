package backend

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
)

// TestStderrNamesTheCause: a Node backend whose script does not exist is
// reported with "Cannot find module …", not with the "Node.js vX" banner
// Node prints last.
func TestStderrNamesTheCause(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	m := startManager(t, Options{
		Specs: []Spec{{Backend: config.Backend{Name: "noscript", Transport: config.TransportStdio, Command: "node",
			Args: []string{"/nonexistent/isogate-no-such-script.js"}}}},
		RestartBudget:      1,
		RestartBackoffBase: time.Millisecond,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := m.WaitHealthy(ctx)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `stderr: "Error: Cannot find module '/nonexistent/isogate-no-such-script.js'"`) ||
		strings.Contains(err.Error(), "Node.js v") {
		t.Fatalf("WaitHealthy = %v", err)
	}
}

// TestTellingStderrLine picks the line that says why.
func TestTellingStderrLine(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"Traceback (most recent call last):", `  File "x.py", line 1`, "ModuleNotFoundError: No module named 'mcp'"}, "ModuleNotFoundError: No module named 'mcp'"},
		{[]string{"panic: boom", "", "goroutine 1 [running]:", "main.main()", "\t/x/main.go:5 +0x1"}, "panic: boom"},
		{[]string{"listening", "bye", "", "Node.js v20.20.2"}, "bye"},
		{[]string{"only line"}, "only line"},
	} {
		r := newRingBuffer(10)
		for _, l := range c.lines {
			r.add(l)
		}
		if got := r.telling(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.lines, got, c.want)
		}
	}
}
