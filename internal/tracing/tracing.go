// Package tracing exports OpenTelemetry spans over OTLP/HTTP: one per MCP
// request, per code-mode run and per backend call. W3C trace context
// (traceparent, tracestate) is read from a request's _meta and written into
// the _meta of the calls sent to backends.
//
// A nil *Tracer is off and costs nothing: every method returns at once.
package tracing

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.34.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracer starts the gateway's spans.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// propagator reads and writes W3C traceparent and tracestate.
var propagator = propagation.TraceContext{}

// New exports spans to the OTLP/HTTP collector at endpoint, such as
// "http://127.0.0.1:4318" (spans go to its /v1/traces). An empty endpoint
// returns nil: tracing off.
func New(endpoint, version string) (*Tracer, error) {
	if endpoint == "" {
		return nil, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("telemetry.otlp_endpoint %q: not an http(s) URL", endpoint)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint + "/v1/traces")}
	if u.Path != "" && u.Path != "/" {
		opts = []otlptracehttp.Option{otlptracehttp.WithEndpointURL(endpoint)}
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry.otlp_endpoint: %w", err)
	}
	return NewWithExporter(exp, version), nil
}

// NewWithExporter sends spans to exp in batches (tests and benchmarks).
func NewWithExporter(exp sdktrace.SpanExporter, version string) *Tracer {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("isogate"), semconv.ServiceVersion(version))))
	return &Tracer{provider: tp, tracer: tp.Tracer("github.com/isogate/isogate")}
}

// Shutdown flushes the spans not yet exported and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Span is a started span; the zero Span (tracing off) does nothing.
type Span struct{ span trace.Span }

// Start starts a span named name as a child of ctx's span. kind is
// trace.SpanKindServer, Client or Internal.
func (t *Tracer) Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	ctx, s := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, Span{s}
}

// SetAttributes adds attributes to the span.
func (s Span) SetAttributes(attrs ...attribute.KeyValue) {
	if s.span != nil {
		s.span.SetAttributes(attrs...)
	}
}

// End ends the span, recording err (if any) as its error status.
func (s Span) End(err error) {
	if s.span == nil {
		return
	}
	if err != nil {
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

// metaCarrier adapts an MCP _meta map to the propagator.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// Extract returns ctx with the remote span context of a request's _meta
// (traceparent, tracestate), when it has a valid one.
func (t *Tracer) Extract(ctx context.Context, meta map[string]any) context.Context {
	if t == nil || meta == nil {
		return ctx
	}
	return propagator.Extract(ctx, metaCarrier(meta))
}

// Inject returns meta with ctx's span context added as traceparent (and
// tracestate). meta is not modified: a copy is returned when anything is
// added.
func (t *Tracer) Inject(ctx context.Context, meta map[string]any) map[string]any {
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	out := make(map[string]any, len(meta)+2)
	for k, v := range meta {
		out[k] = v
	}
	propagator.Inject(ctx, metaCarrier(out))
	return out
}
