package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/resultstore"
	"github.com/isogate/isogate/internal/textcut"
)

// readResultInput is the argument of the read_result meta-tool.
type readResultInput struct {
	URI    string `json:"uri" jsonschema:"isogate://result/{id}[/path/to/part]"`
	Offset int    `json:"offset,omitempty" jsonschema:"byte offset"`
	Limit  int    `json:"limit,omitempty" jsonschema:"max bytes"`
}

// readResultDescription describes read_result to agents.
const readResultDescription = "Read a full result an output was cut from (isogate://result/{id}), by byte range."

// addResultAccess registers the result resources and the read_result tool.
func (sf *Surface) addResultAccess(s *mcp.Server) {
	handler := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		data, err := sf.readResult(ctx, sf.ownerOf(req), req.Params.URI)
		if err != nil {
			return nil, resultReadError(req.Params.URI, err, sf.store.Limits().TTL)
		}
		mime := "text/plain"
		if json.Valid(data) {
			mime = "application/json"
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: mime, Text: string(data)}}}, nil
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: resultstore.URIPrefix + "{id}", Name: "result",
		Description: "The full output of a call_tool_chain result that was summarised, filtered or truncated."}, handler)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: resultstore.URIPrefix + "{id}/{+path}", Name: "result-part", MIMEType: "application/json",
		Description: "One part of a stored JSON result, by slash-separated keys and indexes."}, handler)

	mcp.AddTool(s, &mcp.Tool{Name: "read_result", Description: readResultDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}},
		sf.readResultTool)
}

// readResult returns the stored result, or the part of it, that uri names,
// if owner stored it.
func (sf *Surface) readResult(ctx context.Context, owner, uri string) ([]byte, error) {
	id, path, err := resultstore.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	data, err := sf.store.Get(ctx, owner, id)
	if err != nil || path == "" {
		return data, err
	}
	return resultstore.Lookup(data, path)
}

// readResultTool serves read_result: a byte range of a stored result, with
// a last line saying what is left.
func (sf *Surface) readResultTool(ctx context.Context, req *mcp.CallToolRequest, in readResultInput) (*mcp.CallToolResult, any, error) {
	if r := tooLong("uri", in.URI, maxURIBytes); r != nil {
		return r, nil, nil
	}
	data, err := sf.readResult(ctx, sf.ownerOf(req), in.URI)
	if errors.Is(err, resultstore.ErrNotFound) {
		return textResult(fmt.Sprintf("%s: %v (results are kept for %v, for the principal that made them)",
			in.URI, err, sf.store.Limits().TTL), true), nil, nil
	}
	if err != nil {
		return textResult(fmt.Sprintf("%s: %v", in.URI, err), true), nil, nil
	}
	maxLimit := sf.opts.Output.MaxOutputSize
	limit := in.Limit
	if limit <= 0 || limit > maxLimit {
		limit = maxLimit
	}
	if in.Offset < 0 || in.Offset > len(data) {
		return textResult(fmt.Sprintf("offset %d is outside the result (%d bytes)", in.Offset, len(data)), true), nil, nil
	}
	start, end := rangeOf(data, in.Offset, limit)
	text := string(data[start:end])
	if start > 0 || end < len(data) {
		text += fmt.Sprintf("\n[bytes %d-%d of %d", start, end, len(data))
		if end < len(data) {
			text += fmt.Sprintf("; next: read_result {\"uri\": %q, \"offset\": %d, \"limit\": %d}", in.URI, end, limit)
		}
		text += "]"
	}
	return textResult(text, false), nil, nil
}

// rangeOf returns the byte range [start, end) of data that starts at offset
// and holds at most limit bytes, moved to UTF-8 character boundaries (start
// forward, end backward). A page never splits a character: when the first
// one is longer than limit, the page is that one character (up to
// utf8.UTFMax bytes), so paging neither stalls nor returns U+FFFD.
func rangeOf(data []byte, offset, limit int) (start, end int) {
	rest := textcut.Suffix(data, len(data)-offset)
	start = len(data) - len(rest)
	n := len(textcut.Prefix(rest, limit))
	if n == 0 && len(rest) > 0 {
		_, n = utf8.DecodeRune(rest)
	}
	return start, start + n
}
