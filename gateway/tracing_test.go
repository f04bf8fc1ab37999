package gateway

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/isogate/isogate/config"
)

// otlpReceiver is an OTLP/HTTP trace endpoint built on the official
// protobuf types: it keeps every span it receives.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

func (r *otlpReceiver) byName(name string) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

func TestSpansExportedAndTraceparentPropagated(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	defer collector.Close()
	h := newHTTPGateway(t, func(c *config.Config) { c.Telemetry.OTLPEndpoint = collector.URL })
	cs := h.connect(t, nil)

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"},
		Name: "call_tool_chain", Arguments: map[string]any{"code": "return await local.echo({x: 1})"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	got := <-h.traceparents
	parts := strings.Split(got, "-")
	if len(parts) != 4 || parts[1] != traceID || parts[2] == parentID {
		t.Fatalf("backend got traceparent %q, want trace %s with the gateway's span as parent", got, traceID)
	}
	cs.Close()
	if err := h.g.Close(); err != nil { // flushes the spans
		t.Fatal(err)
	}

	request, run, call := recv.byName("mcp tools/call"), recv.byName("run"), recv.byName("backend tools/call")
	if request == nil || run == nil || call == nil {
		t.Fatalf("spans missing: request %v, run %v, backend call %v", request != nil, run != nil, call != nil)
	}
	for _, s := range []*tracepb.Span{request, run, call} {
		if hex.EncodeToString(s.TraceId) != traceID {
			t.Errorf("span %q in trace %x, want %s", s.Name, s.TraceId, traceID)
		}
	}
	if hex.EncodeToString(request.ParentSpanId) != parentID || attr(request, "mcp.tool") != "call_tool_chain" {
		t.Errorf("request span: parent %x, tool %q", request.ParentSpanId, attr(request, "mcp.tool"))
	}
	if string(run.ParentSpanId) != string(request.SpanId) || attr(run, "isogate.tier") == "" || attr(run, "isogate.outcome") != "ok" {
		t.Errorf("run span: parent %x (request %x), tier %q, outcome %q", run.ParentSpanId, request.SpanId, attr(run, "isogate.tier"), attr(run, "isogate.outcome"))
	}
	if string(call.ParentSpanId) != string(run.SpanId) || attr(call, "isogate.backend") != "local" || attr(call, "mcp.tool") != "echo" {
		t.Errorf("backend call span: parent %x (run %x), attrs %v", call.ParentSpanId, run.SpanId, call.Attributes)
	}
	if hex.EncodeToString(call.SpanId) != parts[2] {
		t.Errorf("backend got parent %s, backend call span is %x", parts[2], call.SpanId)
	}
}
