package pipeline

import (
	"context"

	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
)

func TestBlobKeepsSmallValuesAndTruncatesLargeOnes(t *testing.T) {
	small := NewBlob([]byte(`{"a":1}`))
	b, _ := json.Marshal(struct {
		V Blob `json:"v"`
	}{small})
	if string(b) != `{"v":{"a":1}}` {
		t.Fatalf("small blob: %s", b)
	}
	big := `"` + strings.Repeat("é", MaxRecordedBytes) + `"`
	blob := NewBlob([]byte(big))
	if blob.JSON != nil || blob.Bytes != len(big) || len(blob.Truncated) > MaxRecordedBytes {
		t.Fatalf("big blob: bytes %d, kept %d", blob.Bytes, len(blob.Truncated))
	}
	raw, err := json.Marshal(blob)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("truncated blob is not JSON: %v", err)
	}
	var back Blob
	if err := json.Unmarshal(raw, &back); err != nil || back.Bytes != blob.Bytes || back.Truncated != blob.Truncated || back.JSON != nil {
		t.Fatalf("round trip: %v %+v", err, back.Bytes)
	}
	// A recorded value that merely looks like a truncation marker stays a value.
	var v Blob
	if err := json.Unmarshal([]byte(`{"truncated":"x","bytes":3,"other":1}`), &v); err != nil || v.JSON == nil {
		t.Fatalf("lookalike: %+v", v)
	}
}

// echo answers every call with its arguments, as a backend echo tool does.
var echo = CallerFunc(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(c.Args)}}}, nil
})

// bigArgs is a 64 KB argument object, the most a record keeps per call.
func bigArgs() json.RawMessage {
	return json.RawMessage(`{"pad":"` + strings.Repeat("x", MaxRecordedBytes-16) + `"}`)
}

// The attack of issue 25 (1): a program loops on calls refused past
// sandbox.max_tool_calls, each with 64 KB of arguments. Refused calls are
// counted, not stored, so the record stays the size of the admitted calls.
func TestRecordDoesNotStoreCallsRefusedPastTheBudget(t *testing.T) {
	p := New(Options{Backend: echo})
	run := NewRun(3)
	ctx := WithRun(context.Background(), run)
	args := bigArgs()
	for range 2000 {
		_, _ = p.Call(ctx, &Call{Backend: "b", Tool: "echo", Args: args})
	}
	calls := run.Calls()
	omitted, refused := run.Totals()
	if len(calls) != 3 || refused != 1997 || omitted != 0 {
		t.Fatalf("stored %d calls, refused %d, omitted %d; want 3, 1997, 0", len(calls), refused, omitted)
	}
	if size := recordSize(t, calls); size > 4*2*MaxRecordedBytes {
		t.Fatalf("the record of 3 admitted calls is %d bytes", size)
	}
}

// Admitted calls are bounded too: past MaxRecordBytes of arguments and
// results (or MaxRecordCalls entries) further calls are counted.
func TestRecordIsBoundedInEntriesAndBytes(t *testing.T) {
	p := New(Options{Backend: echo})
	run := NewRun(0)
	ctx := WithRun(context.Background(), run)
	args := bigArgs()
	for range 200 {
		if _, err := p.Call(ctx, &Call{Backend: "b", Tool: "echo", Args: args}); err != nil {
			t.Fatal(err)
		}
	}
	calls := run.Calls()
	omitted, _ := run.Totals()
	if len(calls)+omitted != 200 || omitted == 0 {
		t.Fatalf("stored %d, omitted %d of 200 calls", len(calls), omitted)
	}
	if size := recordSize(t, calls); size > MaxRecordBytes+64<<10 {
		t.Fatalf("record of %d bytes exceeds MaxRecordBytes %d", size, MaxRecordBytes)
	}

	small := NewRun(0)
	ctx = WithRun(context.Background(), small)
	for range MaxRecordCalls + 50 {
		_, _ = p.Call(ctx, &Call{Backend: "b", Tool: "echo"})
	}
	omitted, _ = small.Totals()
	if n := len(small.Calls()); n != MaxRecordCalls || omitted != 50 {
		t.Fatalf("stored %d, omitted %d; want %d, 50", n, omitted, MaxRecordCalls)
	}
}

func recordSize(t *testing.T, calls []CallRecord) int {
	t.Helper()
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// A recorded result is the same Blob whether its JSON is encoded whole or,
// for large texts, with the texts clipped (resultBlob's shortcut).
func TestResultBlobMatchesTheWholeEncoding(t *testing.T) {
	tricky := "a\"b\\c\n\t\r\b\f\x01<>&é€😀\u2028\u2029\xff\xc3 end"
	big := func(unit string) string { return strings.Repeat(unit, MaxRecordedBytes/len(unit)+3) }
	cases := map[string]*mcp.CallToolResult{
		"small":       {Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}},
		"ascii":       {Content: []mcp.Content{&mcp.TextContent{Text: big("x")}}},
		"escapes":     {Content: []mcp.Content{&mcp.TextContent{Text: big(tricky)}}},
		"cut in rune": {Content: []mcp.Content{&mcp.TextContent{Text: "ab" + big("€")}}},
		"two blocks": {Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("<", MaxRecordedBytes/2)},
			&mcp.TextContent{Text: big(tricky)}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("x")}}},
		"many medium": {Content: []mcp.Content{&mcp.TextContent{Text: big("y")[:MaxRecordedBytes/2]},
			&mcp.TextContent{Text: big("z")[:MaxRecordedBytes/2+10]}}},
		"structured": {Content: []mcp.Content{&mcp.TextContent{Text: big(tricky)}},
			StructuredContent: map[string]any{"k": "v"}, IsError: true},
		"small tricky": {Content: []mcp.Content{&mcp.TextContent{Text: tricky}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("<&>")}},
			StructuredContent: json.RawMessage("{ \"a\" : [ \"<b>&\" , 1 ] }"), Meta: mcp.Meta{"k": "<v>"}, IsError: true},
	}
	for name, res := range cases {
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		want, got := NewBlob(raw), resultBlob(res)
		if got.Bytes != want.Bytes || got.Truncated != want.Truncated || string(got.JSON) != string(want.JSON) {
			t.Errorf("%s: got bytes %d, kept %d, JSON %.200q; want bytes %d, kept %d, JSON %.200q (same prefix: %v)", name,
				got.Bytes, len(got.Truncated), got.JSON, want.Bytes, len(want.Truncated), want.JSON, got.Truncated == want.Truncated)
		}
	}
}

// A small result is recorded as the JSON encoding made for it, not
// checked and copied again: recording it costs no allocation beyond the
// encoding's own.
func TestResultBlobKeepsTheEncodingOfASmallResult(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true,"items":[1,2,3]}`}}}
	encode := testing.AllocsPerRun(50, func() {
		if _, err := json.Marshal(res); err != nil {
			t.Fatal(err)
		}
	})
	record := testing.AllocsPerRun(50, func() {
		if b := resultBlob(res); b.JSON == nil {
			t.Fatal("not kept whole")
		}
	})
	if record > encode {
		t.Errorf("recording a small result took %v allocations; its encoding alone takes %v", record, encode)
	}
}

// A record taken while a call is still in flight (its run was cancelled
// and the record is written before the backend's answer comes back) lists
// that call, cut short by the run's end; its outcome replaces the entry
// once it arrives.
func TestRecordListsCallsStillInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := CallerFunc(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
		if c.Tool == "slow" {
			close(entered)
			<-release
		}
		return &mcp.CallToolResult{}, nil
	})
	p := New(Options{Backend: slow})
	run := NewRun(0)
	ctx := WithRun(context.Background(), run)
	if _, err := p.Call(ctx, &Call{Backend: "b", Tool: "fast"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Call(ctx, &Call{Backend: "b", Tool: "slow", Args: json.RawMessage(`{"n":1}`)})
	}()
	<-entered
	calls := run.Calls()
	if len(calls) != 2 || calls[1].Tool != "slow" || !calls[1].RunEnded || calls[1].OK || string(calls[1].Args.JSON) != `{"n":1}` {
		t.Fatalf("calls while one is in flight: %+v", calls)
	}
	close(release)
	<-done
	calls = run.Calls()
	if len(calls) != 2 || calls[1].RunEnded || !calls[1].OK {
		t.Fatalf("calls after it returned: %+v", calls)
	}
}

// jsonStringBodyLen agrees with encoding/json for every byte alone, every
// byte between ASCII neighbours, and the runes it escapes or replaces.
func TestJSONStringBodyLenMatchesEncodingJSON(t *testing.T) {
	var texts []string
	for b := range 256 {
		texts = append(texts, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	texts = append(texts, "", "é€😀", "\u2028\u2029", "\xc3", "\xe2\x82", "a\xffb", "\xed\xa0\x80", bigRecords(1<<12))
	for _, s := range texts {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonStringBodyLen(s), len(raw)-2; got != want {
			t.Errorf("jsonStringBodyLen(%q) = %d, encoding/json writes %d bytes", s, got, want)
		}
	}
}

// bigRecords is about n bytes of JSON records, as a large tool result is.
func bigRecords(n int) string {
	var doc strings.Builder
	doc.WriteString(`{"items":[`)
	for i := 0; doc.Len() < n; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"id":%d,"name":"item <%d> & co","price":%d.5,"tags":["a","b"],"ok":true}`, i, i, i)
	}
	doc.WriteString(`]}`)
	return doc.String()
}

// BenchmarkJSONStringBodyLen: the record stage's scan of a 1 MB text.
func BenchmarkJSONStringBodyLen(b *testing.B) {
	s := bigRecords(1 << 20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		jsonStringBodyLen(s)
	}
}

// operator answers every approval as the console would, naming alice.
type operator struct{ approve bool }

func (o operator) Approve(ctx context.Context, c *Call) (bool, error) {
	ok, _, err := o.ApproveBy(ctx, c)
	return ok, err
}

func (o operator) ApproveBy(context.Context, *Call) (bool, ApprovalBy, error) {
	return o.approve, ApprovalBy{Name: "alice", Via: ViaConsole}, nil
}

// Issue 43 (7): a call whose tool answered isError had an empty error in
// its record (the text only in the result), and an approval's wait was an
// unexplained gap before the call. The record now holds the tool's error
// text (cut to MaxRecordedError) and, per approved or declined call, the
// wait and who answered; a plain result records no error and no approval.
func TestRecordKeepsToolErrorsAndApprovals(t *testing.T) {
	long := strings.Repeat("e", 3*MaxRecordedError)
	backend := CallerFunc(func(_ context.Context, c *Call) (*mcp.CallToolResult, error) {
		switch c.Tool {
		case "missing":
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "ENOENT: no such file /x"}}}, nil
		case "loud":
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: long}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine"}}}, nil
	})
	pol := NewPolicy(map[string]config.Backend{"fs": {Tools: config.ToolPolicy{Approve: []string{"write"}}}})
	p := New(Options{Backend: backend, Policy: pol})
	run := NewRun(0)
	ctx := WithRun(WithApprover(context.Background(), operator{approve: true}), run)
	for _, tool := range []string{"missing", "loud", "read", "write"} {
		_, _ = p.Call(ctx, &Call{Backend: "fs", Tool: tool})
	}
	_, _ = p.Call(WithApprover(ctx, operator{approve: false}), &Call{Backend: "fs", Tool: "write"})
	calls := run.Calls()
	if len(calls) != 5 {
		t.Fatalf("%d calls recorded, want 5", len(calls))
	}
	if c := calls[0]; c.OK || c.Error != "ENOENT: no such file /x" || c.Result.IsZero() {
		t.Errorf("an isError result is recorded as ok=%v error=%q (result kept: %v)", c.OK, c.Error, !c.Result.IsZero())
	}
	if c := calls[1]; len(c.Error) > MaxRecordedError+len("… [cut]") || !strings.HasSuffix(c.Error, "… [cut]") {
		t.Errorf("a long tool error is kept as %d bytes, want at most %d and marked cut", len(c.Error), MaxRecordedError)
	}
	if c := calls[2]; !c.OK || c.Error != "" || c.Approval != nil {
		t.Errorf("a plain call is recorded with error %q, approval %+v", c.Error, c.Approval)
	}
	if a := calls[3].Approval; a == nil || !a.Approved || a.Name != "alice" || a.Via != ViaConsole || a.WaitedMS < 0 {
		t.Errorf("the approved call's approval is %+v, want approved by alice on the console", a)
	}
	if c := calls[4]; c.Code != CodeApprovalDenied || c.Approval == nil || c.Approval.Approved || c.Approval.Name != "alice" {
		t.Errorf("the declined call is recorded with code %q, approval %+v", c.Code, c.Approval)
	}
	raw, _ := json.Marshal(calls[3])
	if !strings.Contains(string(raw), `"approval":{"waited_ms":`) || !strings.Contains(string(raw), `"by":"alice","via":"console"}`) {
		t.Errorf("the approval's JSON: %s", raw)
	}
}
