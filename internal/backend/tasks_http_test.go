//go:build unix

package backend

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isogate/isogate/config"
)

// everythingOverHTTP starts server-everything in its streamable HTTP mode
// on a free loopback port and returns the spec of a backend reaching it.
func everythingOverHTTP(t *testing.T) Spec {
	t.Helper()
	stdio := everythingSpec(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cmd := exec.Command(stdio.Command, stdio.Args[0], "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "listening on port") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("server-everything (streamableHttp) exited before listening")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything (streamableHttp) did not listen within 30 s")
	}
	return Spec{Backend: config.Backend{Name: "everything", Transport: config.TransportStreamableHTTP,
		URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"}}
}

// TestTaskRequiredToolOverStreamableHTTP: server-everything reached over
// streamable HTTP lists simulate-research-query with taskSupport
// "required" (seen through a side tools/list, the go-sdk's decoding drops
// it), and a plain Manager.Call of it gets the completed report: the
// gateway drives the task with requests of its own POSTed beside the
// go-sdk's, on the same session.
func TestTaskRequiredToolOverStreamableHTTP(t *testing.T) {
	spec := everythingOverHTTP(t)
	m := startManager(t, Options{Specs: []Spec{spec}, StartWait: 30 * time.Second})
	waitHealthy(t, m)
	if got := m.TaskSupport("everything", "simulate-research-query"); got != TaskSupportRequired {
		t.Errorf("taskSupport of simulate-research-query: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "everything", "simulate-research-query", map[string]any{"topic": "streams"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(t, res); res.IsError || !strings.Contains(got, "# Research Report: streams") {
		t.Fatalf("result (isError %v): %.300s", res.IsError, got)
	}
}
