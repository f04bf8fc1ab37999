package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ValidationError is the error Load and Validate return for problems with
// the content of a configuration. It holds every problem found, not just
// the first.
type ValidationError struct {
	// File is the configuration file the problems are in, or "" if no
	// file was loaded.
	File string
	// Problems are the problems found, ordered by key.
	Problems []Problem
}

// Error lists the problems one per line, each prefixed with the file name
// (or "config" when there is no file).
func (e *ValidationError) Error() string {
	prefix := e.File
	if prefix == "" {
		prefix = "config"
	}
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix)
		b.WriteString(": ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Key is the full key path of the offending value, such as
	// "backends.fs.transport" or "backends.fs.args[2]"; "" if the problem
	// is not about one key.
	Key string
	// Message says what is wrong and what is expected, such as
	// `must be one of stdio, streamable-http, sse (got "stdoi")`.
	Message string

	keyInMessage bool // Message already names Key
}

// String formats the problem as "key: message".
func (p Problem) String() string {
	if p.Key == "" || p.keyInMessage {
		return p.Message
	}
	return p.Key + ": " + p.Message
}

// Validate checks a configuration, such as one built in code, and returns a
// *ValidationError listing every problem, or nil. A backend without a
// Transport is checked as Load would derive it. Load validates what it
// returns, so its result need not be validated again.
func (c *Config) Validate() error {
	col := newCollector()
	col.validate(c, nil)
	return col.err(c.Source)
}

// Validate checks one backend, such as one built in code, by the rules
// Config.Validate applies to each of a configuration's backends, under the
// key backends.<Name>. It returns a *ValidationError listing every
// problem, or nil. A backend without a Transport is checked as Load would
// derive it.
func (b Backend) Validate() error {
	col := newCollector()
	col.validateBackend(joinKey("backends", b.Name), b.Name, b, nil)
	return col.err("")
}

// err returns the collected problems as a *ValidationError, or nil.
func (c *collector) err(file string) error {
	if len(c.problems) == 0 {
		return nil
	}
	slices.SortStableFunc(c.problems, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return &ValidationError{File: file, Problems: c.problems}
}

// validate checks values and their combinations. skip holds keys whose
// value already has a problem (an unset variable), not to be reported twice.
func (c *collector) validate(cfg *Config, skip map[string]bool) {
	c.validateServer(&cfg.Server)
	for _, name := range sortedKeys(cfg.Backends) {
		c.validateBackend(joinKey("backends", name), name, cfg.Backends[name], skip)
	}
	c.validateSandbox(&cfg.Sandbox)
	c.validateRunCode(&cfg.RunCode)
	c.validateTelemetry(&cfg.Telemetry)
	c.validateSearch(&cfg.Search, skip)
	c.between("state.max_keys", int64(cfg.State.MaxKeys), 1, 1_000_000)
	c.between("state.max_bytes", int64(cfg.State.MaxBytes), 1024, 1<<30)
	if cfg.State.MaxTTL < 0 {
		c.add("state.max_ttl", fmt.Sprintf("must not be negative (got %s; 0: no bound)", cfg.State.MaxTTL))
	}
	if cfg.Store.RedisURL != "" && !skip["store.redis_url"] {
		if u, err := url.Parse(cfg.Store.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			// The value is not echoed: it may hold a password.
			c.add("store.redis_url", `expected a Redis URL such as "redis://127.0.0.1:6379/0" or "rediss://:password@host:6380/0"`)
		}
	}
	if !skip["store.lease_ttl"] {
		c.durationBetween("store.lease_ttl", cfg.Store.LeaseTTL, 10*time.Minute)
	}
	if !skip["store.max_bytes"] {
		c.between("store.max_bytes", cfg.Store.MaxBytes, 1<<20, 64<<30)
	}
	if k := cfg.Store.HMACKey; k != "" && len(k) < 16 && !skip["store.hmac_key"] {
		c.add("store.hmac_key", fmt.Sprintf("must be at least 16 characters (got %d); use a long random secret", len(k)))
	}
	if k := cfg.Store.TokenKey; k != "" && !skip["store.token_key"] {
		switch {
		case len(k) < 16:
			c.add("store.token_key", fmt.Sprintf("must be at least 16 characters (got %d); use a long random secret", len(k)))
		case cfg.Store.RedisURL == "":
			c.add("store.token_key", "only used with store.redis_url (logins are then kept in Redis, encrypted)")
		}
	}
}

func (c *collector) validateServer(s *ServerConfig) {
	if s.HTTP != "" {
		_, port, err := net.SplitHostPort(s.HTTP)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			c.add("server.http", fmt.Sprintf(`expected a listen address host:port such as "127.0.0.1:8787" or ":8787", got %q`, s.HTTP))
		}
	}
	c.oneOf("server.log_level", s.LogLevel, "debug", "info", "warn", "error")
	c.oneOf("server.log_format", s.LogFormat, "text", "json")
	c.oneOf("server.expose", string(s.Expose), string(ExposeMeta), string(ExposePassthrough), string(ExposeBoth))
	c.oneOf("server.tool_names", string(s.ToolNames), string(ToolNamesPrefixed), string(ToolNamesBare), string(ToolNamesAuto))
	if strings.ContainsAny(s.AuthToken, "\r\n") {
		c.add("server.auth_token", "must not contain line breaks")
	}
	c.validateAuth(s)
	c.validateConsole(s)
	c.durationBetween("server.session_idle_timeout", s.SessionIdleTimeout, 7*24*time.Hour)
	c.between("server.max_sessions", int64(s.MaxSessions), 1, 1_000_000)
	c.durationBetween("server.shutdown_grace", s.ShutdownGrace, 10*time.Minute)
	c.durationBetween("server.tasks.max_ttl", s.Tasks.MaxTTL, 7*24*time.Hour)
	c.between("server.tasks.max_per_principal", int64(s.Tasks.MaxPerPrincipal), 1, 100_000)
	for i, o := range s.AllowedOrigins {
		if !validOrigin(o) {
			c.add(indexKey("server.allowed_origins", i), fmt.Sprintf(`expected an origin such as "https://app.example.com" or "http://localhost:3000" (scheme://host[:port], no path), got %q`, o))
		}
	}
	for i, h := range s.AllowedHosts {
		if !validHost(h) {
			c.add(indexKey("server.allowed_hosts", i), fmt.Sprintf(`expected a host name such as "mcp.example.com" or "mcp.example.com:443" (host[:port], no scheme or path), got %q`, h))
		}
	}
	if s.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(s.MetricsAddr); err != nil || !validPort(port) {
			c.add("server.metrics_addr", fmt.Sprintf(`expected a listen address host:port such as "127.0.0.1:9090", got %q`, s.MetricsAddr))
		}
	}
}

func (c *collector) validateTelemetry(t *TelemetryConfig) {
	if t.OTLPEndpoint != "" {
		c.checkURL("telemetry.otlp_endpoint", t.OTLPEndpoint)
	}
}

// validOrigin accepts a serialized origin: scheme://host[:port] with no
// path, query, fragment or user info.
func validOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	return (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}

// validHost accepts a Host header value: a name or IP address, with an
// optional port, nothing else.
func validHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "/@?#*") || strings.IndexFunc(h, unicode.IsSpace) >= 0 {
		return false
	}
	u, err := url.Parse("http://" + h)
	if err != nil || u.Host != h || u.Hostname() == "" {
		return false
	}
	return u.Port() == "" || validPort(u.Port())
}

func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

func (c *collector) validateBackend(key, name string, b Backend, skip map[string]bool) {
	switch {
	case name == "":
		c.add(key, "backend name must not be empty")
	case strings.Contains(name, "."):
		c.add(key, `backend name must not contain "." (it separates backend and tool in tool names)`)
	case strings.IndexFunc(name, unicode.IsSpace) >= 0:
		c.add(key, "backend name must not contain whitespace")
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		c.add(key, "backend name must not contain control characters")
	}

	t := b.Transport
	if t == "" {
		t = deriveTransport(b)
		switch {
		case b.Command != "" && b.URL != "":
			c.add(key, "set either command (stdio transport) or url (streamable-http or sse transport), not both")
		case t == "":
			c.add(key, "needs command (stdio transport) or url (streamable-http or sse transport)")
		}
	}
	switch t {
	case "":
		// Reported above.
	case TransportStdio:
		if b.Command == "" && !skip[key+".command"] {
			c.add(key, "stdio transport needs command")
		}
		if b.URL != "" {
			c.add(key+".url", "not used by the stdio transport (set transport to streamable-http or sse, or remove url)")
		}
		if len(b.Headers) > 0 {
			c.add(key+".headers", "not used by the stdio transport")
		}
	case TransportStreamableHTTP, TransportSSE:
		switch {
		case skip[key+".url"]:
		case b.URL == "":
			c.add(key, string(t)+" transport needs url")
		default:
			c.checkURL(key+".url", b.URL)
		}
		for field, set := range map[string]bool{
			"command":     b.Command != "",
			"args":        len(b.Args) > 0,
			"env":         len(b.Env) > 0,
			"cwd":         b.Cwd != "",
			"inherit_env": b.InheritEnv,
		} {
			if set {
				c.add(key+"."+field, "only used by the stdio transport")
			}
		}
	default:
		c.add(key+".transport", fmt.Sprintf("must be one of stdio, streamable-http, sse (got %q)", t))
	}

	c.durationBetween(key+".timeout", b.Timeout, 24*time.Hour)
	c.between(key+".max_concurrent_calls", int64(b.MaxConcurrentCalls), 1, 1024)
	c.between(key+".max_concurrent_calls_per_principal", int64(b.MaxConcurrentCallsPerPrincipal), 0, 1024)
	c.between(key+".priority", int64(b.Priority), -MaxPriority, MaxPriority)
	if b.Sessions != "" { // zero: the default
		c.oneOf(key+".sessions", string(b.Sessions), string(SessionsAuto), string(SessionsShared), string(SessionsPerClient))
	}
	c.between(key+".max_sessions", int64(b.MaxSessions), 0, 1024) // 0: the default
	for _, k := range sortedKeys(b.Env) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			c.add(joinKey(key+".env", k), `not a valid environment variable name (must be non-empty, without "=")`)
		}
	}
	for _, k := range sortedKeys(b.Headers) {
		if !validHeaderName(k) {
			c.add(joinKey(key+".headers", k), "not a valid HTTP header name")
		} else if strings.ContainsAny(b.Headers[k], "\r\n") {
			c.add(joinKey(key+".headers", k), "header value must not contain line breaks")
		}
	}
	if len(b.Description) > MaxBackendDescription {
		c.add(key+".description", fmt.Sprintf("at most %d bytes (a line that tells this backend apart), got %d", MaxBackendDescription, len(b.Description)))
	}
	for i, tag := range b.Tags {
		if strings.TrimSpace(tag) == "" {
			c.add(indexKey(key+".tags", i), "tag must not be empty")
		}
	}
	c.validateBackendAuth(key, b)
	c.globs(key+".tools.allow", b.Tools.Allow)
	c.globs(key+".tools.deny", b.Tools.Deny)
	c.globs(key+".tools.approve", b.Tools.Approve)
	c.globs(key+".prompts.allow", b.Prompts.Allow)
	c.globs(key+".prompts.deny", b.Prompts.Deny)
	c.globs(key+".resources.allow", b.Resources.Allow)
	c.globs(key+".resources.deny", b.Resources.Deny)
}

// globs checks name, URI or template patterns: non-empty, printable.
func (c *collector) globs(key string, patterns []string) {
	for i, p := range patterns {
		switch {
		case strings.TrimSpace(p) == "":
			c.add(indexKey(key, i), `expected a tool name or glob such as "read_*", got an empty string`)
		case strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			c.add(indexKey(key, i), fmt.Sprintf("must not contain control or invisible characters (got %q)", p))
		}
	}
}

// deriveTransport returns the transport a backend without one uses: stdio
// with a command, streamable-http with a url, "" if that is ambiguous.
func deriveTransport(b Backend) Transport {
	switch {
	case b.Command != "" && b.URL != "":
		return ""
	case b.Command != "":
		return TransportStdio
	case b.URL != "":
		return TransportStreamableHTTP
	}
	return ""
}

func (c *collector) validateSandbox(s *SandboxConfig) {
	c.oneOf("sandbox.isolation", string(s.Isolation), string(IsolationProcess), string(IsolationThread))
	c.oneOf("sandbox.confinement", s.Confinement, "strict", "best-effort", "off")
	if s.Isolation == IsolationThread && !s.TrustedCode {
		c.add("sandbox.isolation", "thread runs scripts inside the gateway process, where off-heap memory (Intl/ICU) "+
			"and builtins that ignore the deadline are not bounded: it requires sandbox.trusted_code: true "+
			"(or use isolation: process, the default, for untrusted code)")
	}
	c.durationBetween("sandbox.timeout", s.Timeout, time.Hour)
	c.between("sandbox.max_heap_mb", int64(s.MaxHeapMB), 8, 4096)
	c.between("sandbox.max_concurrent", int64(s.MaxConcurrent), 1, MaxConcurrentLimit)
	c.between("sandbox.max_concurrent_per_principal", int64(s.MaxConcurrentPerPrincipal), 0, MaxConcurrentLimit)
	c.between("sandbox.spare_workers", int64(s.SpareWorkers), 0, MaxSpareWorkers)
	c.between("sandbox.idle_workers_mb", int64(s.IdleWorkersMB), 0, MaxIdleWorkersMB)
	c.between("sandbox.max_output_size", int64(s.MaxOutputSize), 1, 8<<20)
	c.between("sandbox.max_tool_calls", int64(s.MaxToolCalls), 1, 1_000_000)
	c.durationBetween("sandbox.backend_wait", s.BackendWait, 10*time.Minute)
	c.oneOf("sandbox.typecheck", s.Typecheck, "off", "warn", "strict")
	c.durationBetween("sandbox.typecheck_timeout", s.TypecheckTimeout, time.Minute)
	c.oneOf("sandbox.durable", s.Durable, "off", "paused", "all")
	c.between("sandbox.durable_max_calls", int64(s.DurableMaxCalls), 1, 1_000_000)
	c.between("sandbox.durable_max_bytes", int64(s.DurableMaxBytes), 1024, 64<<20)
	o := &s.Output
	c.between("sandbox.output.intent_min_bytes", int64(o.IntentMinBytes), 0, 64<<20)
	c.between("sandbox.output.chunk_threshold", int64(o.ChunkThreshold), 1, 64<<20)
	c.durationBetween("sandbox.output.result_ttl", o.ResultTTL, 7*24*time.Hour)
	c.between("sandbox.output.result_store_bytes", o.ResultStoreBytes, 1, 16<<30)
}

func (c *collector) validateRunCode(r *RunCodeConfig) {
	for i, h := range r.Fetch.AllowHosts {
		if !validHostPattern(h) {
			c.add(indexKey("run_code.fetch.allow_hosts", i),
				fmt.Sprintf(`expected a host name such as "api.github.com" or "*.example.com", got %q`, h))
		}
	}
	switch {
	case r.Weather.BaseURL != "":
		c.checkURL("run_code.weather.base_url", r.Weather.BaseURL)
	case r.Weather.Enabled:
		c.add("run_code.weather.base_url", "must be set when run_code.weather.enabled is true")
	}
}

func (c *collector) oneOf(key, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		c.add(key, fmt.Sprintf("must be one of %s (got %q)", strings.Join(allowed, ", "), v))
	}
}

func (c *collector) between(key string, v, lo, hi int64) {
	if v < lo || v > hi {
		c.add(key, fmt.Sprintf("must be between %d and %d (got %d)", lo, hi, v))
	}
}

func (c *collector) atLeast(key string, v, lo int64) {
	if v < lo {
		c.add(key, fmt.Sprintf("must be at least %d (got %d)", lo, v))
	}
}

// durationBetween requires 0 < d <= hi.
func (c *collector) durationBetween(key string, d, hi time.Duration) {
	switch {
	case d <= 0:
		c.positiveDuration(key, d)
	case d > hi:
		c.add(key, fmt.Sprintf("must be at most %s (got %s)", hi, d))
	}
}

func (c *collector) positiveDuration(key string, d time.Duration) {
	if d <= 0 {
		c.add(key, fmt.Sprintf("must be a positive duration such as \"30s\" (got %s)", d))
	}
}

func (c *collector) checkURL(key, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.add(key, fmt.Sprintf(`expected an http or https URL such as "https://example.com/mcp", got %q`, raw))
	}
}

// validHeaderName reports whether s is an HTTP token (RFC 9110, 5.6.2).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// validHostPattern accepts "host", "host:port", "*.host" and IP literals,
// and rejects URLs, paths and whitespace.
func validHostPattern(h string) bool {
	if h == "" || strings.ContainsAny(h, "/?#@ \t\r\n") {
		return false
	}
	h = strings.TrimPrefix(h, "*.")
	if strings.Contains(h, "*") {
		return false
	}
	if host, port, err := net.SplitHostPort(h); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
		h = host
	}
	return h != ""
}
