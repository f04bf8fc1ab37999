package clientreq

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/pipeline"
)

// multiRoundTripVersion is the first protocol version whose clients answer
// input requests by retrying the call.
const multiRoundTripVersion = "2026-07-28"

// RoundTripEra reports whether the client of ss speaks a protocol version
// with multi round-trip results (and so none of the server-to-client
// requests of earlier versions).
func RoundTripEra(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= multiRoundTripVersion
}

// oldWayAnswerer answers the input requests a backend returns (inputRequests
// in a result) for a client before 2026-07-28, which knows nothing of
// such results: each becomes the legacy request to the client
// (elicitation/create, sampling/createMessage, roots/list; a client
// without the capability gives the spec's error), and the pipeline's input
// stage calls again with the answers and the backend's untouched
// requestState. A 2026-07-28 client's passthrough call gets the result as
// it is and retries itself; its programs' calls are answered through the
// run's rounds (internal/approvals).
type oldWayAnswerer struct {
	f  *Forwarder
	ss *mcp.ServerSession
}

// Answer implements pipeline.Answerer.
func (a oldWayAnswerer) Answer(ctx context.Context, c *pipeline.Call, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	return a.f.askClient(ctx, a.ss, c.Backend, requests)
}

// WithAnswerer returns ctx with the answerer of ss's input requests, if
// its client needs one from the gateway (before 2026-07-28).
func (f *Forwarder) WithAnswerer(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil || RoundTripEra(ss) {
		return ctx
	}
	return pipeline.WithAnswerer(ctx, oldWayAnswerer{f: f, ss: ss})
}

// askClient sends each input request to the client as its legacy request,
// all at once, and collects the answers by id.
func (f *Forwarder) askClient(ctx context.Context, ss *mcp.ServerSession, backendName string, requests mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	g, ctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	out := make(mcp.InputResponseMap, len(requests))
	for id, ir := range requests {
		g.Go(func() error {
			var (
				resp mcp.InputResponse
				err  error
			)
			client := requestRouter{cr: &f.requests, only: ss}
			switch p := ir.(type) {
			case *mcp.ElicitParams:
				resp, err = client.Elicit(ctx, backendName, p)
			case *mcp.CreateMessageParams:
				resp, err = client.CreateMessage(ctx, backendName, withTools(p))
			case *mcp.CreateMessageWithToolsParams:
				resp, err = client.CreateMessage(ctx, backendName, p)
			case *mcp.ListRootsParams:
				resp, err = client.ListRoots(ctx, backendName, p)
			default:
				err = fmt.Errorf("isogate: backend %q asked for input of an unknown kind (%T)", backendName, ir)
			}
			if err != nil {
				return fmt.Errorf("input request %q: %w", id, err)
			}
			mu.Lock()
			out[id] = resp
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// withTools is a sampling request in the form with tools (the one the
// gateway forwards).
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
	}
	return &mcp.CreateMessageWithToolsParams{Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens,
		Messages: msgs, Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature}
}
