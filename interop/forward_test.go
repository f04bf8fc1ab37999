package interop

import (
	"slices"
	"strings"
	"testing"
)

// forwardReport is the report of scripts/passthrough_forward.mjs.
type forwardReport struct {
	Capabilities []string
	Tools        []string
	Long         struct {
		outcome
		IsError bool
		Text    string
	}
	Progress []struct{ Progress, Total float64 }
	Wire     []struct {
		Progress *float64
		Total    float64
		Token    any
		Method   *string
		Response bool
		ID       any
	}
	SetLevel outcome
	Toggle   struct{ On, Off bool }
	Logs     []struct {
		Level  string
		Logger *string
		Data   any
	}
	Complete map[string]struct {
		outcome
		Value struct{ Values []string }
	}
}

// TestTypeScriptSDKPassthroughForwards: through passthrough, the official
// TypeScript SDK client receives server-everything's progress under its own
// token before the result, its log message tagged with the backend, and
// completions for a backend prompt and resource template.
func TestTypeScriptSDKPassthroughForwards(t *testing.T) {
	t.Parallel()
	var r forwardReport
	// A gateway of its own: a backend's log message reaches the caller only
	// while no other client's call is in flight on that backend (other
	// tests call server-everything through the shared gateway).
	const token = "interop-forward-token"
	runNodeInto(t, &r, "passthrough_forward.mjs", "--http", gateways.http(t, token).url+"?expose=passthrough", "--token", token)
	if !slices.Contains(r.Capabilities, "completions") || !slices.Contains(r.Capabilities, "logging") {
		t.Errorf("capabilities: %v", r.Capabilities)
	}
	if r.Long.Error != nil || r.Long.IsError || !strings.Contains(r.Long.Text, "completed") {
		t.Fatalf("trigger-long-running-operation: %+v (tools %v)", r.Long, r.Tools)
	}
	// Three progress notifications, under the token the SDK sent (the
	// request id), then the response.
	var got []float64
	var id any
	for _, m := range r.Wire {
		if m.Response {
			id = m.ID
			break
		}
		if m.Progress != nil {
			got = append(got, *m.Progress)
		}
	}
	if !slices.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("progress before the result: %v (wire %+v)", got, r.Wire)
	}
	for _, m := range r.Wire {
		if m.Progress != nil && (m.Token != id || m.Total != 3) {
			t.Errorf("progress %v has token %v (total %v), the request id is %v", *m.Progress, m.Token, m.Total, id)
		}
	}
	// onprogress may miss a notification that shares the result's chunk.
	if len(r.Progress) < 2 {
		t.Errorf("onprogress saw %+v", r.Progress)
	}

	if r.SetLevel.Error != nil || !r.Toggle.On || !r.Toggle.Off {
		t.Errorf("logging/setLevel %+v, toggles %+v", r.SetLevel, r.Toggle)
	}
	if len(r.Logs) == 0 {
		t.Error("no log message reached the client")
	}
	for _, l := range r.Logs {
		data, _ := l.Data.(string)
		if l.Logger == nil || *l.Logger != "everything" || !strings.HasSuffix(strings.SplitN(data, " - ", 2)[0], "message") {
			t.Errorf("log message %+v: want logger everything and server-everything's text", l)
		}
	}

	want := map[string][]string{"department": {"Engineering"}, "name": {"Alice"}, "template": {"7"}}
	for k, values := range want {
		c := r.Complete[k]
		if c.Error != nil || !slices.Equal(c.Value.Values, values) {
			t.Errorf("complete %s: %+v, want %v", k, c, values)
		}
	}
	if u := r.Complete["unknown"]; u.Error == nil || u.Error.Code == nil || *u.Error.Code != -32602 {
		t.Errorf("complete of an unknown prompt: %+v, want -32602", u)
	}
}
