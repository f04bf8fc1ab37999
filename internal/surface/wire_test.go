package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultReadErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int64
	}{
		{fmt.Errorf("%w: x", resultstore.ErrNotFound), mcp.CodeResourceNotFound},
		{fmt.Errorf("%w: x", resultstore.ErrBadPath), jsonrpc.CodeInvalidParams},
		{fmt.Errorf("%w: x", resultstore.ErrNotJSON), jsonrpc.CodeInvalidParams},
		{errors.New("disk on fire"), jsonrpc.CodeInternalError},
	} {
		var e *jsonrpc.Error
		if err := resultReadError("isogate://result/x", tc.err, 0); !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("%v: %v, want code %d", tc.err, err, tc.code)
		}
	}
}

// TestWireSafe: no error leaves without a JSON-RPC code, and resource
// contents always carry "text" (the go-sdk drops an empty one).
func TestWireSafe(t *testing.T) {
	plain := wireSafe(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, errors.New("something broke")
	})
	_, err := plain(context.Background(), "resources/read", nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError || e.Message != "something broke" {
		t.Errorf("plain error became %v", err)
	}
	coded := wireSafe(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, fmt.Errorf("wrapped: %w", mcp.ResourceNotFoundError("x"))
	})
	if _, err := coded(context.Background(), "resources/read", nil); !errors.As(err, &e) || e.Code != mcp.CodeResourceNotFound {
		t.Errorf("coded error became %v", err)
	}

	empty := wireSafe(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: "isogate://tools", MIMEType: "text/plain"},
			{URI: "isogate://x", Text: "kept"},
			{URI: "isogate://b", Blob: []byte{1}},
		}}, nil
	})
	res, err := empty(context.Background(), "resources/read", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Contents []map[string]any }
	if err := json.Unmarshal(raw, &got); err != nil || len(got.Contents) != 3 {
		t.Fatalf("%s: %v", raw, err)
	}
	if v, ok := got.Contents[0]["text"]; !ok || v != "" {
		t.Errorf("empty contents: %s", raw)
	}
	if got.Contents[1]["text"] != "kept" {
		t.Errorf("text contents: %s", raw)
	}
	if _, ok := got.Contents[2]["text"]; ok {
		t.Errorf("blob contents got a text: %s", raw)
	}
}
