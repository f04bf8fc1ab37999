// Package fakeembed is an OpenAI-compatible embeddings endpoint for tests
// (POST /v1/embeddings), run as a process of its own: a test binary whose
// TestMain calls [RunIfRequested] first re-executes itself as the
// endpoint ([Start]).
//
// It is not a model: a text's vector is a hashed bag of its words, where
// the words of a few synonym classes (folder/directory, people/user,
// internet/web, add/sum, …) count as one, so that a ranking by these
// vectors finds what lexical search misses on exactly those words. It
// answers deterministically, counts what it is asked, and can be told to
// misbehave (hang, fail, answer garbage or vectors of the wrong length).
package fakeembed

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// Modes of the endpoint ([Process.SetMode]).
const (
	ModeOK       = "ok"       // vectors as described
	ModeHang     = "hang"     // hold every request until its client gives up
	ModeStatus   = "status"   // HTTP 500
	ModeBadJSON  = "badjson"  // 200 with a body that is not JSON
	ModeWrongDim = "wrongdim" // vectors one dimension longer
)

// Environment of the endpoint process.
const (
	envModel = "ISOGATE_FAKEEMBED_MODEL" // set: this process is the endpoint, of this model
	envDims  = "ISOGATE_FAKEEMBED_DIMS"  // vector length
	envAuth  = "ISOGATE_FAKEEMBED_AUTH"  // when set, the Authorization header every request must carry
)

// Synonyms are the word classes whose words get one vector component: the
// semantics this fake endpoint knows. Words are lower-cased, with a
// trailing "s" dropped from words longer than three letters that are not
// themselves in a class ("plus").
var Synonyms = [][]string{
	{"folder", "directory", "dir", "mkdir"},
	{"people", "person", "user", "member", "account"},
	{"internet", "web", "online"},
	{"add", "sum", "plus", "total", "addition"},
	{"size", "big", "large", "byte", "length"},
	{"picture", "image", "photo"},
	{"remove", "delete", "erase"},
	{"message", "post", "chat"},
}

// RunIfRequested serves the endpoint and exits when this process was
// started as one ([Start]); it returns at once otherwise. It serves on a
// loopback port, writes "listening <url>" on stdout, and exits when its
// stdin closes (its test is gone).
func RunIfRequested() {
	model := os.Getenv(envModel)
	if model == "" {
		return
	}
	dims, err := strconv.Atoi(os.Getenv(envDims))
	if err != nil || dims < 2 {
		fmt.Fprintln(os.Stderr, "fakeembed: bad", envDims)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeembed:", err)
		os.Exit(1)
	}
	e := &endpoint{model: model, dims: dims, auth: os.Getenv(envAuth), mode: ModeOK, inputs: map[string]int{}}
	fmt.Printf("listening http://%s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = http.Serve(ln, e.handler())
	os.Exit(1)
}

// endpoint is the server's state.
type endpoint struct {
	model, auth string
	dims        int

	mu       sync.Mutex
	mode     string
	requests int
	inputs   map[string]int // each input text, how many times it was embedded
}

// Stats are what the endpoint was asked.
type Stats struct {
	// Requests counts the POST /v1/embeddings requests.
	Requests int `json:"requests"`
	// Inputs counts, per input text, how many times it was in a request.
	Inputs map[string]int `json:"inputs"`
}

func (e *endpoint) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", e.embeddings)
	mux.HandleFunc("POST /control", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.mode = string(body)
		e.mu.Unlock()
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		_ = json.NewEncoder(w).Encode(Stats{Requests: e.requests, Inputs: e.inputs})
	})
	return mux
}

func (e *endpoint) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	e.mu.Lock()
	e.requests++
	mode := e.mode
	e.mu.Unlock()
	if e.auth != "" && r.Header.Get("Authorization") != e.auth {
		http.Error(w, `{"error": "unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != e.model || len(req.Input) == 0 {
		http.Error(w, fmt.Sprintf(`{"error": "want model %q and inputs"}`, e.model), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	for _, in := range req.Input {
		e.inputs[in]++
	}
	e.mu.Unlock()
	dims := e.dims
	switch mode {
	case ModeHang:
		<-r.Context().Done()
		return
	case ModeStatus:
		http.Error(w, `{"error": "model overloaded"}`, http.StatusInternalServerError)
		return
	case ModeBadJSON:
		_, _ = w.Write([]byte(`{"data": [{"embedding": [0.1, `))
		return
	case ModeWrongDim:
		dims++
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Model  string  `json:"model"`
		Data   []datum `json:"data"`
	}{Object: "list", Model: e.model}
	for i, in := range req.Input {
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: Vector(in, dims)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// stopwords carry no meaning of their own: they are left out of vectors.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be by can do for from how i if in into is it its me my
		of on or so that the their then there this to use was we what when which will with you your`) {
		m[w] = true
	}
	return m
}()

// classOf maps each synonym to its class's first word.
var classOf = func() map[string]string {
	m := map[string]string{}
	for _, class := range Synonyms {
		for _, w := range class {
			m[w] = class[0]
		}
	}
	return m
}()

// Vector is the endpoint's vector of text, of length dims, unit length:
// each word but a few stopwords (or its synonym class) adds ±1 to a
// component its hash picks; a text without such words is the first axis.
func Vector(text string, dims int) []float64 {
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if stopwords[w] {
			continue
		}
		if _, known := classOf[w]; !known && len(w) > 3 && strings.HasSuffix(w, "s") {
			w = strings.TrimSuffix(w, "s")
		}
		if c, ok := classOf[w]; ok {
			w = c
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		sum := h.Sum32()
		sign := 1.0
		if sum&1 == 1 {
			sign = -1
		}
		v[int(sum>>1)%dims] += sign
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

// Options describe an endpoint process.
type Options struct {
	// Model is the only model it embeds with (required).
	Model string
	// Dims is its vectors' length; default 256.
	Dims int
	// Auth, when set, is the Authorization header every request must
	// carry (401 otherwise).
	Auth string
}

// Process is a running endpoint.
type Process struct {
	// URL is its embeddings endpoint, http://127.0.0.1:port/v1/embeddings.
	URL  string
	base string
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{}
}

// Start runs the test binary again as an endpoint (its TestMain must call
// RunIfRequested), waits for its address and stops it when t ends.
func Start(t testing.TB, opts Options) *Process {
	t.Helper()
	if opts.Dims == 0 {
		opts.Dims = 256
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envModel+"="+opts.Model, envDims+"="+strconv.Itoa(opts.Dims), envAuth+"="+opts.Auth)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the fake embeddings endpoint: %v", err)
	}
	p := &Process{cmd: cmd, in: in, done: make(chan struct{})}
	line, err := bufio.NewReader(out).ReadString('\n') // before Wait, which closes the pipe
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("fake embeddings endpoint did not start: %q, %v", line, err)
	}
	p.base = addr
	p.URL = addr + "/v1/embeddings"
	return p
}

// SetMode makes the endpoint behave as mode (a Mode* constant) from its
// next request on.
func (p *Process) SetMode(t testing.TB, mode string) {
	t.Helper()
	resp, err := http.Post(p.base+"/control", "text/plain", bytes.NewReader([]byte(mode)))
	if err != nil {
		t.Fatalf("fake embeddings endpoint: %v", err)
	}
	resp.Body.Close()
}

// Stats returns what the endpoint was asked so far.
func (p *Process) Stats(t testing.TB) Stats {
	t.Helper()
	resp, err := http.Get(p.base + "/stats")
	if err != nil {
		t.Fatalf("fake embeddings endpoint: %v", err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("fake embeddings endpoint stats: %v", err)
	}
	return s
}

// Kill stops the endpoint and waits for it to exit; its port then refuses
// connections.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
	_ = p.in.Close()
}
