package runcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	v8 "rogchap.com/v8go"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/authn"
	"github.com/isogate/isogate/v8sandbox"
)

// Limits of one run.
const (
	// MaxCodeChars is the longest code accepted, in characters.
	MaxCodeChars = 12000
	// DefaultTimeoutMS is the timeout when the input sets none.
	DefaultTimeoutMS = 3000
	// MinTimeoutMS and MaxTimeoutMS bound timeout_ms; values outside are
	// clamped, with a warning.
	MinTimeoutMS = 250
	MaxTimeoutMS = 5000
	// HeapMB caps the V8 heap of a run; ArrayBufferMB caps its ArrayBuffers.
	HeapMB        = 16
	ArrayBufferMB = 16
	// MaxResultBytes caps the serialized result.
	MaxResultBytes = 1 << 20
	// MaxConsoleLines caps console output (stdout and stderr together);
	// further lines are dropped and counted in a warning.
	MaxConsoleLines = 100
	// MaxLineChars caps one console line; longer lines are cut.
	MaxLineChars = 10000
	// MaxAPICalls caps api.* calls per run; MaxConcurrentAPICalls caps
	// those in flight at once (others wait).
	MaxAPICalls           = 100
	MaxConcurrentAPICalls = 8
)

// Input is the input of run_code.
type Input struct {
	Code      string         `json:"code"`
	Language  string         `json:"language,omitempty"`
	TimeoutMS *int           `json:"timeout_ms,omitempty"`
	Hints     map[string]any `json:"hints,omitempty"`
}

// Output is the result of run_code.
type Output struct {
	OK bool `json:"ok"`
	// Result is the sanitized JSON value the code returned; null on error.
	Result      json.RawMessage `json:"result"`
	Stdout      []string        `json:"stdout"`
	Stderr      []string        `json:"stderr"`
	Warnings    []string        `json:"warnings"`
	Error       *ErrorInfo      `json:"error,omitempty"`
	Environment Environment     `json:"environment"`
}

// Environment describes where the code ran.
type Environment struct {
	Engine    string    `json:"engine"`
	V8Version string    `json:"v8_version"`
	TimeoutMS int       `json:"timeout_ms"`
	HeapMB    int       `json:"heap_mb"`
	APIs      []APIInfo `json:"apis"`
}

// Options configure a [Runner].
type Options struct {
	// Runner runs the jobs; required. Give run_code its own pool: its
	// heap limit differs from code mode's, and a worker replaces its isolate
	// whenever the heap limit changes.
	Runner v8sandbox.Runner
	// Config selects the built-in APIs: api.fetch when Fetch.AllowHosts is
	// not empty, api.getWeather when Weather.Enabled.
	Config config.RunCodeConfig
	// State, when set, offers state.get/set/delete/list: the caller's own
	// key-value store (run_code.state). The tool is then not read-only.
	State State
	// Logger receives one debug line per run; default slog.Default().
	Logger *slog.Logger
	// HTTPClient serves APIs whose target is fixed by configuration
	// (api.getWeather); default a client with a 10 s timeout. api.fetch
	// always uses its own client, which enforces the allowlist and refuses
	// private addresses when it dials.
	HTTPClient *http.Client
}

// Service runs code for the run_code tool. It is safe for concurrent use.
type Service struct {
	state     State // state.* (nil: not offered)
	runner    v8sandbox.Runner
	logger    *slog.Logger
	v8Version string

	mu   sync.RWMutex
	apis []*registeredAPI
}

// New returns a Service with the built-in APIs its configuration enables.
func New(opts Options) (*Service, error) {
	if opts.Runner == nil {
		return nil, errors.New("runcode: Options.Runner is required")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	r := &Service{
		state:     opts.State,
		runner:    opts.Runner,
		logger:    logger.With("component", "run_code"),
		v8Version: strings.TrimSpace(v8.Version()),
	}
	cfg := opts.Config
	if len(cfg.Fetch.AllowHosts) > 0 {
		api, err := FetchAPI(cfg.Fetch)
		if err != nil {
			return nil, err
		}
		if err := r.Register(api); err != nil {
			return nil, err
		}
	}
	if cfg.Weather.Enabled {
		if err := r.Register(WeatherAPI(cfg.Weather, client)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds api as api.<Name>. Register APIs before [Runner.AddTo]: the
// tool's description lists them when it is added.
func (r *Service) Register(api API) error {
	reg, err := newRegisteredAPI(api)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.apis {
		if a.Name == api.Name {
			return fmt.Errorf("runcode: API %q is already registered", api.Name)
		}
	}
	r.apis = append(r.apis, reg)
	return nil
}

// APIs lists the registered APIs in registration order.
func (r *Service) APIs() []APIInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	infos := make([]APIInfo, len(r.apis))
	for i, a := range r.apis {
		infos[i] = a.info()
	}
	return infos
}

func (r *Service) snapshot() []*registeredAPI {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*registeredAPI(nil), r.apis...)
}

// Run runs in.Code and reports the outcome; it never fails otherwise.
func (r *Service) Run(ctx context.Context, in Input) Output {
	apis := r.snapshot()
	out := Output{
		Result:   json.RawMessage("null"),
		Stdout:   []string{},
		Stderr:   []string{},
		Warnings: []string{},
		Environment: Environment{
			Engine:    "v8",
			V8Version: r.v8Version,
			HeapMB:    HeapMB,
			APIs:      make([]APIInfo, len(apis)),
		},
	}
	for i, a := range apis {
		out.Environment.APIs[i] = a.info()
	}
	timeoutMS, warning := clampTimeout(in.TimeoutMS)
	out.Environment.TimeoutMS = timeoutMS
	if warning != "" {
		out.Warnings = append(out.Warnings, warning)
	}
	hints, err := validateInput(in)
	if err != nil {
		out.Error = &ErrorInfo{Type: ValidationError, Message: err.Error()}
		return out
	}

	s := newSession(in.Code, apis, hints)
	s.state = r.state
	host := s.table()
	job := v8sandbox.Job{
		Source:      wrapSource(in.Code),
		Origin:      codeOrigin,
		Prelude:     prelude,
		Functions:   host.Functions(),
		AwaitResult: true,
		Limits: v8sandbox.Limits{
			Timeout:        time.Duration(timeoutMS) * time.Millisecond,
			HeapMB:         HeapMB,
			ArrayBufferMB:  ArrayBufferMB,
			MaxResultBytes: MaxResultBytes,
		},
		Principal: authn.NameFromContext(ctx), // a worker process never serves two principals
	}
	res, runErr := r.runner.Run(ctx, job, host)
	out.Stdout, out.Stderr, out.Warnings = s.console.collect(out.Warnings)
	if runErr != nil {
		out.Error = engineError(runErr, in.Code)
	} else {
		// Only the envelope the prelude's runner delivered counts: the
		// completion value is the code's to choose.
		out.Result, out.Error = decodeEnvelope(s.delivered())
		if out.Error != nil {
			out.Result = json.RawMessage("null")
		}
	}
	if out.Error != nil {
		// A script controls its error text: bound it like a console line.
		out.Error.Message = truncateLine(out.Error.Message)
		out.Error.Stack = truncateLine(out.Error.Stack)
	}
	out.OK = out.Error == nil
	r.logger.Debug("run_code", "ok", out.OK, "timeout_ms", timeoutMS, "host_calls", res.HostCalls,
		"duration", res.Duration, "error", errorType(out.Error))
	return out
}

func errorType(e *ErrorInfo) string {
	if e == nil {
		return ""
	}
	return e.Type
}

// clampTimeout applies the default and the bounds to timeout_ms.
func clampTimeout(ms *int) (int, string) {
	switch {
	case ms == nil:
		return DefaultTimeoutMS, ""
	case *ms < MinTimeoutMS:
		return MinTimeoutMS, fmt.Sprintf("timeout_ms %d is below the minimum; using %d", *ms, MinTimeoutMS)
	case *ms > MaxTimeoutMS:
		return MaxTimeoutMS, fmt.Sprintf("timeout_ms %d is above the maximum; using %d", *ms, MaxTimeoutMS)
	}
	return *ms, ""
}

// validateInput checks what the schema cannot and returns the hints as JSON.
func validateInput(in Input) (map[string]json.RawMessage, error) {
	if in.Language != "" && in.Language != "javascript" {
		return nil, fmt.Errorf("language %q is not supported; the only language is \"javascript\"", in.Language)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, errors.New("code is empty")
	}
	if !utf8.ValidString(in.Code) {
		return nil, errors.New("code is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(in.Code); n > MaxCodeChars {
		return nil, fmt.Errorf("code is %d characters long; the limit is %d", n, MaxCodeChars)
	}
	return normalizeHints(in.Hints)
}

// normalizeHints marshals each hint; a flat {latitude, longitude} is also
// offered as the "location" hint.
func normalizeHints(h map[string]any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(h)+1)
	for k, v := range h {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("hint %q: %v", k, err)
		}
		out[k] = b
	}
	if _, ok := out["location"]; !ok {
		lat, okLat := h["latitude"].(float64)
		lon, okLon := h["longitude"].(float64)
		if okLat && okLon {
			out["location"], _ = json.Marshal(map[string]float64{"latitude": lat, "longitude": lon})
		}
	}
	return out, nil
}
