package embedsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"

	"github.com/isogate/isogate/config"
)

// Failure kinds of an [EndpointError]: the outcome label of
// isogate_search_embeddings_requests_total and the kind a log line names.
const (
	KindTimeout     = "timeout"      // the bound passed before the answer
	KindUnreachable = "unreachable"  // no HTTP answer (refused, reset, DNS)
	KindStatus      = "status"       // an HTTP status other than 200
	KindBadResponse = "bad_response" // not the embeddings JSON, or the wrong number of vectors
	KindDimension   = "dimension"    // vectors of another length than expected
)

// EndpointError is a failed request to the embeddings endpoint.
type EndpointError struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Status is the HTTP status (KindStatus only).
	Status int
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *EndpointError) Error() string {
	if e.Kind == KindStatus {
		return fmt.Sprintf("embeddings endpoint: HTTP %d: %v", e.Status, e.Err)
	}
	return fmt.Sprintf("embeddings endpoint: %s: %v", e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *EndpointError) Unwrap() error { return e.Err }

// kindOf is an error's failure kind ("ok" for nil).
func kindOf(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := errors.AsType[*EndpointError](err); ok {
		return e.Kind
	}
	return KindUnreachable
}

// maxResponseBytes bounds an endpoint's answer: a batch of 256 vectors of
// 4 096 dimensions written as JSON is about 20 MB.
const maxResponseBytes = 64 << 20

// Client asks an OpenAI-compatible embeddings endpoint (POST
// /v1/embeddings, as Ollama, vLLM, TEI and LiteLLM serve it) for vectors.
type Client struct {
	// URL is the endpoint, e.g. http://127.0.0.1:11434/v1/embeddings.
	URL string
	// Model is the request's model.
	Model string
	// Headers are sent with every request (e.g. Authorization).
	Headers map[string]string
	// Dimensions, when positive, is sent as the request's dimensions and
	// required of every vector; 0: the model's own, required to be the
	// same for every vector.
	Dimensions int
	// HTTP is the client requests go through; nil: http.DefaultClient.
	HTTP *http.Client
}

// NewClient is the client of search.embeddings: its URL gets
// "/embeddings" appended when its path does not end so (an OpenAI base URL
// such as …/v1 names the endpoint …/v1/embeddings).
func NewClient(cfg config.EmbeddingsConfig) *Client {
	u := cfg.URL
	if !strings.HasSuffix(strings.TrimRight(u, "/"), "/embeddings") {
		u = strings.TrimRight(u, "/") + "/embeddings"
	}
	return &Client{URL: u, Model: cfg.Model, Headers: cfg.Headers, Dimensions: cfg.Dimensions}
}

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one vector per input, in order, each of length dims (the
// same for all). ctx bounds the request: when it ends first the error is
// an *EndpointError of KindTimeout.
func (c *Client) Embed(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: c.Model, Input: inputs, EncodingFormat: "float", Dimensions: c.Dimensions})
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, transportError(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &EndpointError{Kind: KindStatus, Status: resp.StatusCode, Err: errors.New(snippet(data))}
	}
	if len(data) > maxResponseBytes {
		return nil, &EndpointError{Kind: KindBadResponse, Err: fmt.Errorf("answer larger than %d bytes", maxResponseBytes)}
	}
	var out embedResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, &EndpointError{Kind: KindBadResponse, Err: fmt.Errorf("not an embeddings answer: %w", err)}
	}
	if len(out.Data) != len(inputs) {
		return nil, &EndpointError{Kind: KindBadResponse, Err: fmt.Errorf("%d vectors for %d inputs", len(out.Data), len(inputs))}
	}
	vecs := make([][]float32, len(inputs))
	dims := c.Dimensions
	for i, d := range out.Data {
		if d.Index < 0 || d.Index >= len(inputs) || vecs[d.Index] != nil {
			return nil, &EndpointError{Kind: KindBadResponse, Err: fmt.Errorf("vector index %d out of place", d.Index)}
		}
		if dims == 0 {
			dims = len(d.Embedding)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != dims {
			return nil, &EndpointError{Kind: KindDimension, Err: fmt.Errorf("vector %d has %d dimensions, want %d", i, len(d.Embedding), dims)}
		}
		v, err := normalized(d.Embedding)
		if err != nil {
			return nil, &EndpointError{Kind: KindBadResponse, Err: fmt.Errorf("vector %d: %w", d.Index, err)}
		}
		vecs[d.Index] = v
	}
	return vecs, nil
}

// transportError classifies a failure to get an answer: the caller's
// bound (ctx) passing is a timeout, anything else unreachable.
func transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return &EndpointError{Kind: KindTimeout, Err: err}
	}
	return &EndpointError{Kind: KindUnreachable, Err: err}
}

// snippet is the start of an error answer, on one line, for the log.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "empty answer"
	}
	return s
}

// normalized is v scaled to unit length, as float32: the cosine of two
// such vectors is their dot product.
func normalized(v []float64) ([]float32, error) {
	var sum float64
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errors.New("not a finite number")
		}
		sum += x * x
	}
	if sum == 0 {
		return nil, errors.New("zero vector")
	}
	n := math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out, nil
}
