//go:build unix

package backend

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// clarifier answers a backend's elicitation with the first interpretation
// it offers, and keeps what it was asked.
type clarifier struct {
	fakeClientRequests
	mu    sync.Mutex
	asked []string
}

func (c *clarifier) Elicit(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p.Message)
	c.mu.Unlock()
	raw, _ := json.Marshal(p.RequestedSchema)
	var s struct {
		Properties struct {
			Interpretation struct {
				OneOf []struct {
					Const string `json:"const"`
				} `json:"oneOf"`
			} `json:"interpretation"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(raw, &s)
	choice := "none offered"
	if o := s.Properties.Interpretation.OneOf; len(o) > 0 {
		choice = o[0].Const
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": choice}}, nil
}

// TestTaskInputOverStreamableHTTP: an ambiguous simulate-research-query
// over streamable HTTP goes input_required and sends its elicitation on
// the gateway's tasks/result stream; the gateway routes it to the
// session's client requests and POSTs the answer back, and the report
// uses the interpretation chosen.
func TestTaskInputOverStreamableHTTP(t *testing.T) {
	spec := everythingOverHTTP(t)
	cr := &clarifier{}
	m := startManager(t, Options{Specs: []Spec{spec}, StartWait: 30 * time.Second, ClientRequests: cr})
	waitHealthy(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.CallTool(ctx, "everything", "simulate-research-query", map[string]any{"topic": "python", "ambiguous": true})
	if err != nil {
		t.Fatal(err)
	}
	got := resultText(t, res)
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if len(cr.asked) != 1 || !strings.Contains(cr.asked[0], "multiple interpretations") {
		t.Fatalf("elicitations %q; result %.500s", cr.asked, got)
	}
	if res.IsError || !strings.Contains(got, "input_required") || strings.Contains(got, "default") {
		t.Fatalf("result (isError %v): %.800s", res.IsError, got)
	}
}
