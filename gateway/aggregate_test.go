package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/surface"
)

// TestPromptsAndResourcesAggregated: through a real MCP client, the real
// server-everything's prompts are listed as everything__<prompt> and
// fetched through it, its resources and templates are listed under their
// own URIs and read through it, isogate's own resources stay, and a prompt
// added to a backend reaches the client as prompts/list_changed.
func TestPromptsAndResourcesAggregated(t *testing.T) {
	g, dyn := surfaceGateway(t, config.ExposeMeta, nil)
	promptsChanged := make(chan struct{}, 16)
	cs := connect(t, g, &mcp.ClientOptions{PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
		promptsChanged <- struct{}{}
	}})
	ctx := context.Background()
	direct, err := g.app.Backends.Session(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	backendPrompts, err := direct.ListPrompts(ctx, nil)
	if err != nil || len(backendPrompts.Prompts) == 0 {
		t.Fatalf("server-everything lists no prompts: %v", err)
	}

	// The lists are published in the background once the backend is up:
	// wait for them through list_changed notifications.
	deadline := time.After(20 * time.Second)
	var prompts []*mcp.Prompt
	for {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		prompts = res.Prompts
		if len(prompts) >= len(backendPrompts.Prompts) {
			break
		}
		select {
		case <-promptsChanged:
		case <-deadline:
			t.Fatalf("prompts/list has %d prompts, server-everything %d", len(prompts), len(backendPrompts.Prompts))
		}
	}
	var names []string
	for _, p := range prompts {
		names = append(names, p.Name)
	}
	for _, bp := range backendPrompts.Prompts {
		if !slices.Contains(names, surface.PassthroughName("everything", bp.Name)) {
			t.Errorf("prompts/list lacks everything__%s: %v", bp.Name, names)
		}
	}
	// prompts/get of a prompt without required arguments, compared with the backend's answer.
	for _, bp := range backendPrompts.Prompts {
		required := false
		for _, a := range bp.Arguments {
			required = required || a.Required
		}
		if required {
			continue
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: surface.PassthroughName("everything", bp.Name)})
		if err != nil {
			t.Fatalf("prompts/get %s: %v", bp.Name, err)
		}
		want, err := direct.GetPrompt(ctx, &mcp.GetPromptParams{Name: bp.Name})
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got.Messages)
		wj, _ := json.Marshal(want.Messages)
		if len(got.Messages) == 0 || string(gj) != string(wj) {
			t.Errorf("prompts/get %s returned %s, the backend %s", bp.Name, gj, wj)
		}
		break
	}

	// Resources: the backend's under their own URIs, and isogate's own.
	backendResources, err := direct.ListResources(ctx, nil)
	if err != nil || len(backendResources.Resources) == 0 {
		t.Fatalf("server-everything lists no resources: %v", err)
	}
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"isogate://backends", "isogate://stats", backendResources.Resources[0].URI} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources/list lacks %s: %v", want, uris)
		}
	}
	uri := backendResources.Resources[0].URI
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	want, err := direct.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got.Contents)
	wj, _ := json.Marshal(want.Contents)
	if len(got.Contents) == 0 || string(gj) != string(wj) {
		t.Errorf("resources/read %s returned %s, the backend %s", uri, gj, wj)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "isogate://backends"}); err != nil {
		t.Errorf("isogate://backends: %v", err)
	}
	if backendTemplates, err := direct.ListResourceTemplates(ctx, nil); err == nil && len(backendTemplates.ResourceTemplates) > 0 {
		var templates []string
		for rt, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			templates = append(templates, rt.URITemplate)
		}
		for _, bt := range backendTemplates.ResourceTemplates {
			if !slices.Contains(templates, bt.URITemplate) {
				t.Errorf("resources/templates/list lacks %s: %v", bt.URITemplate, templates)
			}
		}
	}
	// resources/subscribe is forwarded when the backend supports it.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil && !strings.Contains(err.Error(), "does not support") {
		t.Errorf("resources/subscribe %s: %v", uri, err)
	}

	// A prompt added to a backend reaches the client.
	for len(promptsChanged) > 0 {
		<-promptsChanged
	}
	dyn.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Says hello."}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from dyn"}}}}, nil
	})
	deadline = time.After(20 * time.Second)
	for {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "dyn__greet"})
		if err == nil {
			if text := res.Messages[0].Content.(*mcp.TextContent).Text; text != "hello from dyn" {
				t.Errorf("dyn__greet: %q", text)
			}
			break
		}
		select {
		case <-promptsChanged:
		case <-deadline:
			t.Fatalf("dyn__greet never became available: %v", err)
		}
	}
}
