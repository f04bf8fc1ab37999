package config

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// writeConfig writes content to a file called name in a fresh directory and
// returns its path.
func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testEnv is the environment the tests load with: never the process's.
func testEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	return append([]string{
		"HOME=" + t.TempDir(),
		"XDG_CONFIG_HOME=" + t.TempDir(),
		"XDG_CACHE_HOME=/cache",
		"XDG_DATA_HOME=/data",
	}, extra...)
}

// loadYAML loads content as isogate.yaml with the given environment.
func loadYAML(t *testing.T, content string, env ...string) (*Config, error) {
	t.Helper()
	return Load(LoadOptions{Path: writeConfig(t, "isogate.yaml", content), Environ: testEnv(t, env...)})
}

func mustLoadYAML(t *testing.T, content string, env ...string) *Config {
	t.Helper()
	cfg, err := loadYAML(t, content, env...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %T: %v", err, err)
	}
	return ve.Problems
}

// wantProblem asserts that err is a *ValidationError with a problem at key
// whose message contains msg.
func wantProblem(t *testing.T, err error, key, msg string) {
	t.Helper()
	for _, p := range problemsOf(t, err) {
		if p.Key == key && strings.Contains(p.Message, msg) {
			return
		}
	}
	t.Errorf("no problem %s: ...%s...; got:\n%v", key, msg, err)
}

func TestServerHardeningKeys(t *testing.T) {
	path := writeConfig(t, "isogate.yaml", `server:
  session_idle_timeout: 5m
  max_sessions: 20
  allowed_origins: ["https://app.example.com", "http://localhost:3000"]
  allowed_hosts: ["mcp.example.com", "MCP.example.com:8443", "10.0.0.7", "[fd00::1]:8787"]
  metrics_addr: 127.0.0.1:9464
  watch_config: true
telemetry:
  otlp_endpoint: http://127.0.0.1:4318
`)
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if s.SessionIdleTimeout != 5*time.Minute || s.MaxSessions != 20 || len(s.AllowedOrigins) != 2 || len(s.AllowedHosts) != 4 ||
		s.MetricsAddr != "127.0.0.1:9464" || !s.WatchConfig || cfg.Telemetry.OTLPEndpoint != "http://127.0.0.1:4318" {
		t.Errorf("got server %+v telemetry %+v", s, cfg.Telemetry)
	}
	bad := writeConfig(t, "bad.yaml", `server:
  session_idle_timeout: 0s
  max_sessions: 0
  allowed_origins: ["https://app.example.com/path", "*"]
  allowed_hosts: ["https://mcp.example.com", "mcp.example.com/mcp", "*.example.com", "mcp.example.com:99999", ""]
  metrics_addr: "9464"
telemetry:
  otlp_endpoint: "localhost:4318"
`)
	_, err = Load(LoadOptions{Path: bad, Environ: testEnv(t)})
	for _, key := range []string{"server.session_idle_timeout", "server.max_sessions", "server.allowed_origins[0]",
		"server.allowed_origins[1]", "server.allowed_hosts[0]", "server.allowed_hosts[1]", "server.allowed_hosts[2]",
		"server.allowed_hosts[3]", "server.allowed_hosts[4]", "server.metrics_addr", "telemetry.otlp_endpoint"} {
		if err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("no problem reported for %s: %v", key, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	env := testEnv(t) // XDG_CONFIG_HOME is an empty directory: no default file
	cfg, err := Load(LoadOptions{Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Server: ServerConfig{LogLevel: "info", LogFormat: "text", CacheDir: "/cache/isogate",
			SessionIdleTimeout: 30 * time.Minute, MaxSessions: 10000, Expose: ExposeMeta, ToolNames: ToolNamesAuto, ShutdownGrace: 5 * time.Second,
			Tasks: TasksConfig{MaxTTL: 15 * time.Minute, MaxPerPrincipal: 32},
			Auth: AuthConfig{ClockSkew: 30 * time.Second, JWKSMinRefresh: 10 * time.Second, GroupsClaim: "groups",
				IntrospectionCacheTTL: time.Minute, IntrospectionRate: 10},
			Console: ConsoleConfig{SessionTTL: 8 * time.Hour}},
		Backends: map[string]Backend{},
		Sandbox: SandboxConfig{
			Isolation: IsolationProcess, Confinement: "best-effort", Timeout: 30 * time.Second, MaxHeapMB: 50,
			MaxConcurrent: 8, MaxConcurrentPerPrincipal: 4, SpareWorkers: 2, IdleWorkersMB: 1024, MaxOutputSize: 200000, MaxToolCalls: 1000, BackendWait: 10 * time.Second,
			Typecheck: "off", TypecheckTimeout: 2 * time.Second,
			Durable: "paused", DurableMaxCalls: 1000, DurableMaxBytes: 4 << 20,
			Output: OutputConfig{
				IntentFilter: true, IntentMinBytes: 5000, AutoChunk: true, ChunkThreshold: 10240,
				Truncate: true, Footer: true, ResultTTL: 15 * time.Minute, ResultStoreBytes: 67108864,
			},
		},
		RunCode: RunCodeConfig{Weather: WeatherConfig{BaseURL: "https://api.open-meteo.com"}},
		Store:   StoreConfig{LeaseTTL: 6 * time.Second, MaxBytes: 64 << 20, DataDir: "/data/isogate"},
		State:   StateConfig{MaxKeys: 1000, MaxBytes: 1 << 20},
		Search:  SearchConfig{Embeddings: EmbeddingsConfig{Timeout: time.Second, BatchSize: 32}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load with no file:\n got %+v\nwant %+v", cfg, want)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	d := Default()
	d.Server.CacheDir = want.Server.CacheDir
	d.Store.DataDir = want.Store.DataDir
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Default():\n got %+v\nwant %+v", d, want)
	}

	// An empty file gives the defaults too, and is recorded as the source.
	path := writeConfig(t, "isogate.yaml", "")
	cfg, err = Load(LoadOptions{Path: path, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	want.Source = path
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load of empty file:\n got %+v\nwant %+v", cfg, want)
	}
}

func TestDefaultPaths(t *testing.T) {
	tests := []struct {
		env             map[string]string
		config, cache   string
		wantConfigFound bool
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/xdg/c", "XDG_CACHE_HOME": "/xdg/k", "HOME": "/h"}, "/xdg/c/isogate/isogate.yaml", "/xdg/k/isogate", true},
		{map[string]string{"HOME": "/h"}, "/h/.config/isogate/isogate.yaml", "/h/.cache/isogate", true},
		// Relative XDG directories are ignored, as the XDG spec says.
		{map[string]string{"XDG_CONFIG_HOME": "rel", "XDG_CACHE_HOME": "rel", "HOME": "/h"}, "/h/.config/isogate/isogate.yaml", "/h/.cache/isogate", true},
		{map[string]string{}, "", filepath.Join(os.TempDir(), "isogate"), false},
	}
	for _, tt := range tests {
		lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
		if got := defaultPath(lookup); got != tt.config {
			t.Errorf("defaultPath(%v) = %q, want %q", tt.env, got, tt.config)
		}
		if got := defaultCacheDir(lookup); got != tt.cache {
			t.Errorf("defaultCacheDir(%v) = %q, want %q", tt.env, got, tt.cache)
		}
	}
}

func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.yaml")

	// The default path may be missing.
	cfg, err := Load(LoadOptions{Environ: []string{"XDG_CONFIG_HOME=" + dir, "HOME=" + dir}})
	if err != nil {
		t.Fatalf("missing default file: %v", err)
	}
	if cfg.Source != "" {
		t.Errorf("Source = %q, want none", cfg.Source)
	}

	// The default path is loaded when it exists.
	def := filepath.Join(dir, "isogate", "isogate.yaml")
	if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, []byte("server: {log_level: debug}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(LoadOptions{Environ: []string{"XDG_CONFIG_HOME=" + dir}})
	if err != nil || cfg.Source != def || cfg.Server.LogLevel != "debug" {
		t.Fatalf("default file: cfg=%+v err=%v", cfg, err)
	}

	// An explicit path must exist, whether from Path or --config.
	_, err = Load(LoadOptions{Path: missing, Environ: []string{}})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing explicit Path: err = %v, want not-exist naming the file", err)
	}
	fset := pflag.NewFlagSet("test", pflag.ContinueOnError)
	RegisterFlags(fset)
	if err := fset.Parse([]string{"--config", missing}); err != nil {
		t.Fatal(err)
	}
	_, err = Load(LoadOptions{Flags: fset, Environ: []string{"XDG_CONFIG_HOME=" + dir}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing --config: err = %v, want not-exist", err)
	}

	// --config takes precedence over Path.
	other := writeConfig(t, "other.yaml", "server: {log_level: warn}\n")
	fset = pflag.NewFlagSet("test", pflag.ContinueOnError)
	RegisterFlags(fset)
	if err := fset.Parse([]string{"--config=" + other}); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(LoadOptions{Path: def, Flags: fset, Environ: []string{}})
	if err != nil || cfg.Source != other || cfg.Server.LogLevel != "warn" {
		t.Errorf("--config over Path: cfg=%+v err=%v", cfg, err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"isogate.yaml", "server: [unclosed\n", "not valid YAML"},
		{"isogate.json", `{"server": `, "not valid JSON"},
		{"isogate.toml", "server = = 1", "not valid TOML"},
		{"isogate.yaml", "- a list\n", "not valid YAML"},
	}
	for _, tt := range tests {
		path := writeConfig(t, tt.name, tt.content)
		_, err := Load(LoadOptions{Path: path, Environ: []string{}})
		var ve *ValidationError
		if err == nil || errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s %q: err = %v, want plain error naming the file and %q", tt.name, tt.content, err, tt.want)
		}
	}
}

// The same configuration in each format loads to the same Config.
func TestFormats(t *testing.T) {
	files := map[string]string{
		"isogate.yaml": `
server:
  http: 127.0.0.1:8787
  log_level: debug
backends:
  fs:
    command: npx
    args: [-y, server-fs, 8080]
    env: {ROOT: /tmp}
    timeout: 5s
    tags: [local]
  gh:
    url: https://example.com/mcp
    headers: {Authorization: Bearer x}
    max_concurrent_calls: 2
sandbox:
  max_heap_mb: 64
  output:
    result_ttl: 1h
    result_store_bytes: 1000
run_code:
  fetch:
    allow_hosts: [API.Example.com]
`,
		"isogate.yml": `{server: {http: "127.0.0.1:8787", log_level: debug},
backends: {fs: {command: npx, args: [-y, server-fs, 8080], env: {ROOT: /tmp}, timeout: 5s, tags: [local]},
  gh: {url: "https://example.com/mcp", headers: {Authorization: Bearer x}, max_concurrent_calls: 2}},
sandbox: {max_heap_mb: 64, output: {result_ttl: 1h, result_store_bytes: 1000}},
run_code: {fetch: {allow_hosts: [API.Example.com]}}}`,
		"isogate.json": `{
  "server": {"http": "127.0.0.1:8787", "log_level": "debug"},
  "backends": {
    "fs": {"command": "npx", "args": ["-y", "server-fs", 8080], "env": {"ROOT": "/tmp"}, "timeout": "5s", "tags": ["local"]},
    "gh": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "max_concurrent_calls": 2}
  },
  "sandbox": {"max_heap_mb": 64, "output": {"result_ttl": "1h", "result_store_bytes": 1000}},
  "run_code": {"fetch": {"allow_hosts": ["API.Example.com"]}}
}`,
		"isogate.toml": `
[server]
http = "127.0.0.1:8787"
log_level = "debug"

[backends.fs]
command = "npx"
args = ["-y", "server-fs", 8080]
env = { ROOT = "/tmp" }
timeout = "5s"
tags = ["local"]

[backends.gh]
url = "https://example.com/mcp"
headers = { Authorization = "Bearer x" }
max_concurrent_calls = 2

[sandbox]
max_heap_mb = 64

[sandbox.output]
result_ttl = "1h"
result_store_bytes = 1000

[run_code.fetch]
allow_hosts = ["API.Example.com"]
`,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, name, content)
			cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
			if err != nil {
				t.Fatal(err)
			}
			want := defaults(func(string) (string, bool) { return "", false })
			want.Source = path
			want.Server.HTTP = "127.0.0.1:8787"
			want.Server.LogLevel = "debug"
			want.Server.CacheDir = "/cache/isogate"
			want.Store.DataDir = "/data/isogate"
			want.Backends = map[string]Backend{
				"fs": {
					Name: "fs", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "server-fs", "8080"},
					Env: map[string]string{"ROOT": "/tmp"}, Timeout: 5 * time.Second, MaxConcurrentCalls: 8, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
					MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal, Tags: []string{"local"},
				},
				"gh": {
					Name: "gh", Transport: TransportStreamableHTTP, URL: "https://example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer x"}, Timeout: 30 * time.Second, MaxConcurrentCalls: 2, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
					MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal,
				},
			}
			want.Order = []string{"fs", "gh"}
			want.Sandbox.MaxHeapMB = 64
			want.Sandbox.Output.ResultTTL = time.Hour
			want.Sandbox.Output.ResultStoreBytes = 1000
			want.RunCode.Fetch.AllowHosts = []string{"api.example.com"}
			if !reflect.DeepEqual(cfg, want) {
				t.Errorf("\n got %+v\nwant %+v", cfg, want)
			}
		})
	}
}

func TestExampleFiles(t *testing.T) {
	env := testEnv(t, "GITHUB_TOKEN=ghp_x", "ISOGATE_TOKEN=secret")
	cfg, err := Load(LoadOptions{Path: "testdata/isogate.example.yaml", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.BackendNames(); !slices.Equal(got, []string{"filesystem", "github", "legacy"}) {
		t.Errorf("BackendNames = %v", got)
	}
	if cfg.Server.AuthToken != "secret" || cfg.Backends["github"].Headers["Authorization"] != "Bearer ghp_x" {
		t.Errorf("expansion: auth_token=%q headers=%v", cfg.Server.AuthToken, cfg.Backends["github"].Headers)
	}
	if got, want := cfg.Backends["filesystem"].Cwd, "testdata"; got != want {
		t.Errorf("relative cwd = %q, want %q (relative to the file)", got, want)
	}
	// Everything but the paths, tokens and backends is at its default.
	d := defaults(func(string) (string, bool) { return "", false })
	d.Server.CacheDir = "/cache/isogate"
	if !reflect.DeepEqual(cfg.Sandbox, d.Sandbox) {
		t.Errorf("example sandbox %+v differs from defaults %+v", cfg.Sandbox, d.Sandbox)
	}

	cfg, err = Load(LoadOptions{Path: "testdata/claude_desktop_config.json", Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.BackendNames(); !slices.Equal(got, []string{"filesystem", "github", "legacy"}) {
		t.Errorf("mcpServers BackendNames = %v", got)
	}
}

func TestEnvOverrides(t *testing.T) {
	file := `
backends:
  gh:
    command: gh-mcp
    env: {KEEP: x}
sandbox:
  max_heap_mb: 100
`
	tests := []struct {
		env   string
		check func(*Config) any
		want  any
	}{
		{"ISOGATE_SANDBOX__MAX_HEAP_MB=64", func(c *Config) any { return c.Sandbox.MaxHeapMB }, 64},
		{"ISOGATE_SERVER__AUTH_TOKEN=x", func(c *Config) any { return c.Server.AuthToken }, "x"},
		{"ISOGATE_SERVER__HTTP=:9000", func(c *Config) any { return c.Server.HTTP }, ":9000"},
		{"ISOGATE_SANDBOX__TIMEOUT=1m", func(c *Config) any { return c.Sandbox.Timeout }, time.Minute},
		{"ISOGATE_SANDBOX__OUTPUT__FOOTER=false", func(c *Config) any { return c.Sandbox.Output.Footer }, false},
		{"ISOGATE_SANDBOX__OUTPUT__RESULT_STORE_BYTES=4096", func(c *Config) any { return c.Sandbox.Output.ResultStoreBytes }, int64(4096)},
		{"ISOGATE_RUN_CODE__ENABLED=false", func(c *Config) any { return c.RunCode.Enabled }, false},
		{"ISOGATE_RUN_CODE__FETCH__ALLOW_HOSTS=a.com, b.org", func(c *Config) any { return c.RunCode.Fetch.AllowHosts }, []string{"a.com", "b.org"}},
		{"ISOGATE_BACKENDS__GH__TIMEOUT=2s", func(c *Config) any { return c.Backends["gh"].Timeout }, 2 * time.Second},
		{"ISOGATE_BACKENDS__GH__TAGS=a,b", func(c *Config) any { return c.Backends["gh"].Tags }, []string{"a", "b"}},
		// Keys of env and headers keep their case, and merge with the file's.
		{"ISOGATE_BACKENDS__GH__ENV__GH_TOKEN=t", func(c *Config) any { return c.Backends["gh"].Env }, map[string]string{"KEEP": "x", "GH_TOKEN": "t"}},
		// A backend can be added from the environment.
		{"ISOGATE_BACKENDS__NEW__COMMAND=srv", func(c *Config) any { return c.Backends["new"] }, Backend{
			Name: "new", Transport: TransportStdio, Command: "srv", Timeout: 30 * time.Second, MaxConcurrentCalls: 8, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal,
		}},
		// Variables without "__" are not overrides.
		{"ISOGATE_CONFIG=/elsewhere", func(c *Config) any { return c.Sandbox.MaxHeapMB }, 100},
		// Other prefixes are not read.
		{"XISOGATE_SANDBOX__MAX_HEAP_MB=9", func(c *Config) any { return c.Sandbox.MaxHeapMB }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			cfg := mustLoadYAML(t, file, tt.env)
			if got := tt.check(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestEnvOverrideProblems(t *testing.T) {
	tests := []struct{ env, key, msg string }{
		{"ISOGATE_SANDBOX__MAX_HEAP_MB=2", "sandbox.max_heap_mb",
			"must be between 8 and 4096 (got 2) (from environment variable ISOGATE_SANDBOX__MAX_HEAP_MB)"},
		{"ISOGATE_SANDBOX__MAX_CONCURRENT=abc", "sandbox.max_concurrent",
			`expected an integer, got "abc" (from environment variable ISOGATE_SANDBOX__MAX_CONCURRENT)`},
		{"ISOGATE_SANDBOX__TIMOUT=1s", "sandbox.timout",
			`unknown key "sandbox.timout" (did you mean "sandbox.timeout"?) (from environment variable ISOGATE_SANDBOX__TIMOUT)`},
		{"ISOGATE_SANBOX__TIMEOUT=1s", "sanbox",
			`unknown key "sanbox" (did you mean "sandbox"?) (from environment variable ISOGATE_SANBOX__TIMEOUT)`},
		{"ISOGATE_SANDBOX____TIMEOUT=1s", "", `environment variable ISOGATE_SANDBOX____TIMEOUT: empty key between "__" separators`},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, err := loadYAML(t, "", tt.env)
			ps := problemsOf(t, err)
			if len(ps) != 1 || ps[0].Key != tt.key || ps[0].Message != tt.msg {
				t.Errorf("got %#v\nwant key %q message %q", ps, tt.key, tt.msg)
			}
		})
	}
}

func parseFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fset := pflag.NewFlagSet("isogate", pflag.ContinueOnError)
	RegisterFlags(fset)
	fset.Bool("verbose", false, "a flag that is not configuration")
	if err := fset.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fset
}

func TestFlagOverrides(t *testing.T) {
	file := "server:\n  http: 127.0.0.1:1\n  log_level: debug\n  log_format: json\n"
	tests := []struct {
		args []string
		want ServerConfig
	}{
		{nil, ServerConfig{HTTP: "127.0.0.1:1", LogLevel: "debug", LogFormat: "json"}},
		{[]string{"--verbose"}, ServerConfig{HTTP: "127.0.0.1:1", LogLevel: "debug", LogFormat: "json"}},
		{[]string{"--http", ":8787"}, ServerConfig{HTTP: ":8787", LogLevel: "debug", LogFormat: "json"}},
		{[]string{"--log-level=warn"}, ServerConfig{HTTP: "127.0.0.1:1", LogLevel: "warn", LogFormat: "json"}},
		{[]string{"--log-format", "text", "--log-level", "error"}, ServerConfig{HTTP: "127.0.0.1:1", LogLevel: "error", LogFormat: "text"}},
		// Setting a flag to "" is a change too: --http= means stdio.
		{[]string{"--http="}, ServerConfig{HTTP: "", LogLevel: "debug", LogFormat: "json"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			path := writeConfig(t, "isogate.yaml", file)
			cfg, err := Load(LoadOptions{Path: path, Flags: parseFlags(t, tt.args...), Environ: testEnv(t)})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.CacheDir = "/cache/isogate"
			tt.want.SessionIdleTimeout, tt.want.MaxSessions = DefaultSessionIdleTimeout, DefaultMaxSessions
			tt.want.Expose, tt.want.ToolNames = ExposeMeta, ToolNamesAuto
			tt.want.ShutdownGrace = DefaultShutdownGrace
			tt.want.Tasks = Default().Server.Tasks
			tt.want.Auth = Default().Server.Auth
			tt.want.Console = Default().Server.Console
			if !reflect.DeepEqual(cfg.Server, tt.want) {
				t.Errorf("got %+v, want %+v", cfg.Server, tt.want)
			}
		})
	}

	// Unchanged flags do not override the defaults either.
	cfg, err := Load(LoadOptions{Flags: parseFlags(t), Environ: testEnv(t)})
	if err != nil || cfg.Server.LogLevel != "info" || cfg.Server.LogFormat != "text" {
		t.Errorf("no flags set: cfg=%+v err=%v", cfg, err)
	}

	// A bad flag value is reported as coming from the flag.
	_, err = Load(LoadOptions{Flags: parseFlags(t, "--log-level=loud"), Environ: testEnv(t)})
	wantProblem(t, err, "server.log_level", `must be one of debug, info, warn, error (got "loud") (from flag --log-level)`)
}

func TestPrecedence(t *testing.T) {
	file := "server: {log_level: debug, log_format: json, http: '127.0.0.1:1'}\n"
	env := []string{"ISOGATE_SERVER__LOG_LEVEL=warn", "ISOGATE_SERVER__LOG_FORMAT=text"}
	path := writeConfig(t, "isogate.yaml", file)
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t, env...), Flags: parseFlags(t, "--log-level=error")})
	if err != nil {
		t.Fatal(err)
	}
	// log_level: file < env < flag; log_format: file < env; http: file only.
	if s := cfg.Server; s.LogLevel != "error" || s.LogFormat != "text" || s.HTTP != "127.0.0.1:1" {
		t.Errorf("got %+v", s)
	}
}

func TestLookupEnvOnly(t *testing.T) {
	t.Setenv("ISOGATE_SANDBOX__MAX_HEAP_MB", "9")
	lookup := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "from-lookup", true
		}
		return "", false
	}
	cfg, err := Load(LoadOptions{Path: writeConfig(t, "isogate.yaml", "server: {auth_token: '${TOKEN}'}"), LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	// With only LookupEnv, the process environment is not read for overrides.
	if cfg.Server.AuthToken != "from-lookup" || cfg.Sandbox.MaxHeapMB != 50 {
		t.Errorf("got auth_token %q max_heap_mb %d", cfg.Server.AuthToken, cfg.Sandbox.MaxHeapMB)
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "alpha", "B_2": "beta", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		unset    []string
		err      string
	}{
		{in: "plain", want: "plain"},
		{in: "${A}", want: "alpha"},
		{in: "x-${A}-${B_2}-y", want: "x-alpha-beta-y"},
		{in: "${EMPTY}", want: ""},
		{in: "$A and $ stay", want: "$A and $ stay"},
		{in: "$${A} is literal", want: "${A} is literal"},
		{in: "${NOPE}/${A}/${NOPE2}", want: "/alpha/", unset: []string{"NOPE", "NOPE2"}},
		{in: "${A", err: `unterminated variable reference "${A" (missing "}")`},
		{in: "${A:-x}", err: `invalid variable reference "${A:-x}"`},
		{in: "${}", err: `invalid variable reference "${}"`},
		{in: "${1A}", err: `invalid variable reference "${1A}"`},
	}
	for _, tt := range tests {
		got, unset, err := expandVars(tt.in, lookup)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expandVars(%q) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want || !slices.Equal(unset, tt.unset) {
			t.Errorf("expandVars(%q) = %q, %v, %v; want %q, %v", tt.in, got, unset, err, tt.want, tt.unset)
		}
	}
}

func TestExpansionInConfig(t *testing.T) {
	file := `
server:
  auth_token: ${TOKEN}
backends:
  gh:
    command: ${BIN}/server
    args: [--token, "${TOKEN}", $literal]
    env: {GH: "${GH_TOKEN}"}
  web:
    url: https://${HOST}/mcp
    headers: {Authorization: "Bearer ${TOKEN}"}
    tags: ["${TOKEN}"]
`
	cfg := mustLoadYAML(t, file, "TOKEN=tok", "BIN=/opt", "GH_TOKEN=ghp", "HOST=example.com")
	gh, web := cfg.Backends["gh"], cfg.Backends["web"]
	checks := []struct{ got, want string }{
		{cfg.Server.AuthToken, "tok"},
		{gh.Command, "/opt/server"},
		{strings.Join(gh.Args, " "), "--token tok $literal"},
		{gh.Env["GH"], "ghp"},
		{web.URL, "https://example.com/mcp"},
		{web.Headers["Authorization"], "Bearer tok"},
		{web.Tags[0], "${TOKEN}"}, // tags are not expanded
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestUnsetVariables(t *testing.T) {
	file := `
server:
  auth_token: ${ISOGATE_TOKEN}
backends:
  github:
    command: gh-mcp
    args: [--x, "${ARG}"]
    env: {TOKEN: "${GITHUB_TOKEN}"}
  web:
    url: ${WEB_URL}
    headers: {X-Key: "${KEY}"}
  off:
    command: ${OFF_BIN}
    disabled: true
`
	path := writeConfig(t, "isogate.yaml", file)
	_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	ps := problemsOf(t, err)
	want := []Problem{
		{Key: "backends.github.args[1]", Message: "environment variable ARG is not set"},
		{Key: "backends.github.env.TOKEN", Message: "environment variable GITHUB_TOKEN is not set"},
		{Key: "backends.web.headers.X-Key", Message: "environment variable KEY is not set"},
		// No "needs url" on top: the url is missing because of the variable.
		{Key: "backends.web.url", Message: "environment variable WEB_URL is not set"},
		{Key: "server.auth_token", Message: "environment variable ISOGATE_TOKEN is not set"},
	}
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("got  %#v\nwant %#v", ps, want)
	}
	line := path + ": backends.github.env.TOKEN: environment variable GITHUB_TOKEN is not set"
	if !slices.Contains(strings.Split(err.Error(), "\n"), line) {
		t.Errorf("Error() lacks line %q:\n%v", line, err)
	}
}

func TestMCPServers(t *testing.T) {
	file := `{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "server-fs"], "env": {"ROOT": "/tmp"}, "alwaysAllow": ["x"]},
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    "typed": {"type": "http", "url": "https://example.com/typed"},
    "events": {"type": "sse", "url": "https://example.com/sse"},
    "explicit": {"type": "stdio", "command": "srv", "disabled": true}
  },
  "globalShortcut": "Ctrl+Space"
}`
	path := writeConfig(t, "claude_desktop_config.json", file)
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t, "TOKEN=tok", "ISOGATE_SERVER__HTTP=:1")})
	if err != nil {
		t.Fatal(err)
	}
	d := defaultBackend()
	want := map[string]Backend{
		"fs": {Name: "fs", Transport: TransportStdio, Command: "npx", Args: []string{"-y", "server-fs"},
			Env: map[string]string{"ROOT": "/tmp"}, Timeout: d.Timeout, MaxConcurrentCalls: d.MaxConcurrentCalls, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal},
		"remote": {Name: "remote", Transport: TransportStreamableHTTP, URL: "https://example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: d.Timeout, MaxConcurrentCalls: d.MaxConcurrentCalls, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal},
		"typed": {Name: "typed", Transport: TransportStreamableHTTP, URL: "https://example.com/typed",
			Timeout: d.Timeout, MaxConcurrentCalls: d.MaxConcurrentCalls, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal},
		"events": {Name: "events", Transport: TransportSSE, URL: "https://example.com/sse",
			Timeout: d.Timeout, MaxConcurrentCalls: d.MaxConcurrentCalls, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal},
		"explicit": {Name: "explicit", Transport: TransportStdio, Command: "srv", Disabled: true,
			Timeout: d.Timeout, MaxConcurrentCalls: d.MaxConcurrentCalls, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions,
			MaxConcurrentCallsPerPrincipal: DefaultMaxConcurrentCallsPerPrincipal},
	}
	if !reflect.DeepEqual(cfg.Backends, want) {
		t.Errorf("backends:\n got %+v\nwant %+v", cfg.Backends, want)
	}
	if cfg.Server.HTTP != ":1" || cfg.Source != path {
		t.Errorf("env override or source lost: %+v, %q", cfg.Server, cfg.Source)
	}
	if got := cfg.EnabledBackends(); len(got) != 4 || got[0].Name != "fs" || got[3].Name != "events" {
		t.Errorf("EnabledBackends = %+v", got)
	}

	// Problems are named by the keys of the mcpServers file.
	tests := []struct{ file, key, msg string }{
		{`{"mcpServers": {"x": {"args": ["a"]}}}`, "mcpServers.x",
			"needs command (stdio transport) or url (streamable-http or sse transport)"},
		{`{"mcpServers": {"x": {"type": "stdio", "url": "https://e.com"}}}`, "mcpServers.x", "stdio transport needs command"},
		{`{"mcpServers": {"x": {"type": "websocket", "url": "wss://e.com"}}}`, "mcpServers.x.type",
			`must be one of stdio, http, streamable-http, sse (got "websocket")`},
		{`{"mcpServers": {"x": {"command": "a", "args": "b"}}}`, "mcpServers.x.args", `expected a list of strings, got "b"`},
		{`{"mcpServers": {"x": {"url": "https://e.com", "headers": {"A": "${NOPE}"}}}}`, "mcpServers.x.headers.A",
			"environment variable NOPE is not set"},
		{`{"mcpServers": {"x.y": {"command": "a"}}}`, `mcpServers."x.y"`, `backend name must not contain "."`},
		{`{"mcpServers": {"x": "npx"}}`, "mcpServers.x", `expected a map with command or url, got "npx"`},
		{`{"mcpServers": ["x"]}`, "mcpServers", "expected a map of server names to servers, got a list"},
		{`{"mcpServers": {}, "server": {"http": ":1"}}`, "server", "cannot be combined with mcpServers"},
		{`{"mcpServers": {}, "backends": {}}`, "backends", "cannot be combined with mcpServers"},
	}
	for _, tt := range tests {
		path := writeConfig(t, "mcp.json", tt.file)
		_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
		wantProblem(t, err, tt.key, tt.msg)
	}
}

func TestValidationProblems(t *testing.T) {
	tests := []struct {
		name, yaml, key, msg string
	}{
		// server
		{"http addr", "server: {http: '8787'}", "server.http", `expected a listen address host:port such as "127.0.0.1:8787" or ":8787", got "8787"`},
		{"http port", "server: {http: 'localhost:http'}", "server.http", `got "localhost:http"`},
		{"log level", "server: {log_level: verbose}", "server.log_level", `must be one of debug, info, warn, error (got "verbose")`},
		{"log format", "server: {log_format: xml}", "server.log_format", `must be one of text, json (got "xml")`},
		{"tool names", "server: {tool_names: short}", "server.tool_names", `must be one of prefixed, bare, auto (got "short")`},
		// backends
		{"transport", "backends: {fs: {transport: stdoi, command: x}}", "backends.fs.transport", `must be one of stdio, streamable-http, sse (got "stdoi")`},
		{"stdio needs command", "backends: {x: {transport: stdio}}", "backends.x", "stdio transport needs command"},
		{"http needs url", "backends: {x: {transport: streamable-http}}", "backends.x", "streamable-http transport needs url"},
		{"sse needs url", "backends: {x: {transport: sse}}", "backends.x", "sse transport needs url"},
		{"neither", "backends: {x: {tags: [a]}}", "backends.x", "needs command (stdio transport) or url (streamable-http or sse transport)"},
		{"empty backend", "backends: {x: }", "backends.x", "needs command (stdio transport) or url"},
		{"both", "backends: {x: {command: a, url: 'https://e.com'}}", "backends.x", "set either command (stdio transport) or url (streamable-http or sse transport), not both"},
		{"url on stdio", "backends: {x: {transport: stdio, command: a, url: 'https://e.com'}}", "backends.x.url", "not used by the stdio transport"},
		{"headers on stdio", "backends: {x: {command: a, headers: {A: b}}}", "backends.x.headers", "not used by the stdio transport"},
		{"args on http", "backends: {x: {url: 'https://e.com', args: [a]}}", "backends.x.args", "only used by the stdio transport"},
		{"command on http", "backends: {x: {transport: streamable-http, url: 'https://e.com', command: a}}", "backends.x.command", "only used by the stdio transport"},
		{"cwd on sse", "backends: {x: {transport: sse, url: 'https://e.com', cwd: /}}", "backends.x.cwd", "only used by the stdio transport"},
		{"bad url", "backends: {x: {url: 'ftp://e.com'}}", "backends.x.url", `expected an http or https URL such as "https://example.com/mcp", got "ftp://e.com"`},
		{"url without host", "backends: {x: {url: 'https://'}}", "backends.x.url", `got "https://"`},
		{"timeout", "backends: {x: {command: a, timeout: 0s}}", "backends.x.timeout", "must be a positive duration such as \"30s\" (got 0s)"},
		{"timeout unparsable", "backends: {x: {command: a, timeout: 30 seconds}}", "backends.x.timeout", `expected a duration such as "30s" or "1m30s", got "30 seconds"`},
		{"timeout number", "backends: {x: {command: a, timeout: 30}}", "backends.x.timeout", `expected a duration such as "30s" or "1m30s", got 30`},
		{"max calls", "backends: {x: {command: a, max_concurrent_calls: 0}}", "backends.x.max_concurrent_calls", "must be between 1 and 1024 (got 0)"},
		{"priority", "backends: {x: {command: a, priority: 2000000}}", "backends.x.priority", "must be between -1000000 and 1000000 (got 2000000)"},
		{"env name", "backends: {x: {command: a, env: {'A=B': c}}}", "backends.x.env.A=B", "not a valid environment variable name"},
		{"header name", "backends: {x: {url: 'https://e.com', headers: {'Bad Header': c}}}", `backends.x.headers."Bad Header"`, "not a valid HTTP header name"},
		{"header value", "backends: {x: {url: 'https://e.com', headers: {A: \"b\\nc\"}}}", "backends.x.headers.A", "must not contain line breaks"},
		{"empty tag", "backends: {x: {command: a, tags: [ok, '']}}", "backends.x.tags[1]", "tag must not be empty"},
		{"dotted name", "backends: {my.server: {command: a}}", `backends."my.server"`, `backend name must not contain "." (it separates backend and tool in tool names)`},
		{"spaced name", "backends: {'my server': {command: a}}", `backends."my server"`, "backend name must not contain whitespace"},
		{"empty name", "backends: {'': {command: a}}", `backends.""`, "backend name must not be empty"},
		{"bad variable", "backends: {x: {command: '${A'}}", "backends.x.command", `unterminated variable reference "${A"`},
		// sandbox
		{"isolation", "sandbox: {isolation: vm}", "sandbox.isolation", `must be one of process, thread (got "vm")`},
		{"thread untrusted", "sandbox: {isolation: thread}", "sandbox.isolation", "requires sandbox.trusted_code: true"},
		{"thread not trusted", "sandbox: {isolation: thread, trusted_code: false}", "sandbox.isolation", "requires sandbox.trusted_code: true"},
		{"heap low", "sandbox: {max_heap_mb: 2}", "sandbox.max_heap_mb", "must be between 8 and 4096 (got 2)"},
		{"heap high", "sandbox: {max_heap_mb: 5000}", "sandbox.max_heap_mb", "must be between 8 and 4096 (got 5000)"},
		{"sandbox timeout", "sandbox: {timeout: -1s}", "sandbox.timeout", "must be a positive duration such as \"30s\" (got -1s)"},
		{"concurrent", "sandbox: {max_concurrent: 0}", "sandbox.max_concurrent", "must be between 1 and 256 (got 0)"},
		{"output size", "sandbox: {max_output_size: 0}", "sandbox.max_output_size", "must be between 1 and 8388608 (got 0)"},
		{"intent min", "sandbox: {output: {intent_min_bytes: -1}}", "sandbox.output.intent_min_bytes", "must be between 0 and 67108864 (got -1)"},
		{"chunk", "sandbox: {output: {chunk_threshold: 0}}", "sandbox.output.chunk_threshold", "must be between 1 and 67108864 (got 0)"},
		{"ttl", "sandbox: {output: {result_ttl: 0s}}", "sandbox.output.result_ttl", "must be a positive duration"},
		{"store", "sandbox: {output: {result_store_bytes: 0}}", "sandbox.output.result_store_bytes", "must be between 1 and 17179869184 (got 0)"},
		// Upper bounds: every numeric and duration key.
		{"concurrent max", "sandbox: {max_concurrent: 100000}", "sandbox.max_concurrent", "must be between 1 and 256 (got 100000)"},
		{"timeout max", "sandbox: {timeout: 2h}", "sandbox.timeout", "must be at most 1h0m0s (got 2h0m0s)"},
		{"output size max", "sandbox: {max_output_size: 9000000000}", "sandbox.max_output_size", "must be between 1 and 8388608 (got 9000000000)"},
		{"backend wait max", "sandbox: {backend_wait: 1h}", "sandbox.backend_wait", "must be at most 10m0s (got 1h0m0s)"},
		{"backend wait zero", "sandbox: {backend_wait: 0s}", "sandbox.backend_wait", "must be a positive duration"},
		{"intent min max", "sandbox: {output: {intent_min_bytes: 100000000}}", "sandbox.output.intent_min_bytes", "must be between 0 and 67108864"},
		{"chunk max", "sandbox: {output: {chunk_threshold: 100000000}}", "sandbox.output.chunk_threshold", "must be between 1 and 67108864"},
		{"ttl max", "sandbox: {output: {result_ttl: 10000h}}", "sandbox.output.result_ttl", "must be at most 168h0m0s"},
		{"store max", "sandbox: {output: {result_store_bytes: 99999999999999}}", "sandbox.output.result_store_bytes", "must be between 1 and 17179869184"},
		{"backend timeout max", "backends: {x: {command: a, timeout: 100h}}", "backends.x.timeout", "must be at most 24h0m0s"},
		{"calls max", "backends: {x: {command: a, max_concurrent_calls: 5000}}", "backends.x.max_concurrent_calls", "must be between 1 and 1024 (got 5000)"},
		{"idle max", "server: {session_idle_timeout: 1000h}", "server.session_idle_timeout", "must be at most 168h0m0s"},
		{"grace max", "server: {shutdown_grace: 1h}", "server.shutdown_grace", "must be at most 10m0s"},
		{"grace zero", "server: {shutdown_grace: 0s}", "server.shutdown_grace", "must be a positive duration"},
		{"duration overflow", "sandbox: {timeout: 9999999999h}", "sandbox.timeout", "expected a duration"},
		{"int overflow", "sandbox: {max_concurrent: 99999999999999999999}", "sandbox.max_concurrent", "expected an integer"},
		// server.auth
		{"rule deny bidi", `server: {auth: {rules: {r: {deny: ["github.\u202edelete_*"]}}}}`, "server.auth.rules.r.deny[0]",
			`must not contain control or invisible characters (got "github.\u202edelete_*")`},
		{"rule allow zero width", `server: {auth: {rules: {r: {allow: ["ok.*", "github.\u200b*"]}}}}`, "server.auth.rules.r.allow[1]", "invisible characters"},
		{"rule approve isolate", `server: {auth: {rules: {r: {approve: ["\u2066github.*\u2069"]}}}}`, "server.auth.rules.r.approve[0]", "invisible characters"},
		{"rule deny mark", `server: {auth: {rules: {r: {deny: ["github.\u200fx"]}}}}`, "server.auth.rules.r.deny[0]", "invisible characters"},
		{"rule deny empty", `server: {auth: {rules: {r: {deny: [""]}}}}`, "server.auth.rules.r.deny[0]", "got an empty string"},
		{"rule principal bidi", `server: {auth: {rules: {r: {principals: ["ali\u202ece"]}}}}`, "server.auth.rules.r.principals[0]", "invisible characters"},
		{"rule group soft hyphen", `server: {auth: {rules: {r: {groups: ["eng\u00ad"]}}}}`, "server.auth.rules.r.groups[0]", "invisible characters"},
		{"admin bidi", `server: {auth: {admins: ["group:\u202eops"]}}`, "server.auth.admins[0]", "invisible characters"},
		{"introspection ttl max", "server: {auth: {introspection_cache_ttl: 2h}}", "server.auth.introspection_cache_ttl", "must be at most 1h0m0s"},
		{"introspection rate", "server: {auth: {introspection_rate: 0}}", "server.auth.introspection_rate", "must be between 1 and 10000 (got 0)"},
		// run_code
		{"allow host url", "run_code: {fetch: {allow_hosts: [ok.com, 'https://x.com']}}", "run_code.fetch.allow_hosts[1]",
			`expected a host name such as "api.github.com" or "*.example.com", got "https://x.com"`},
		{"allow host path", "run_code: {fetch: {allow_hosts: ['x.com/api']}}", "run_code.fetch.allow_hosts[0]", `got "x.com/api"`},
		{"allow host wildcard", "run_code: {fetch: {allow_hosts: ['a.*.com']}}", "run_code.fetch.allow_hosts[0]", `got "a.*.com"`},
		{"weather url", "run_code: {weather: {base_url: 'open-meteo'}}", "run_code.weather.base_url", `expected an http or https URL`},
		{"weather needs url", "run_code: {weather: {enabled: true, base_url: ''}}", "run_code.weather.base_url", "must be set when run_code.weather.enabled is true"},
		// types
		{"int", "sandbox: {max_concurrent: abc}", "sandbox.max_concurrent", `expected an integer, got "abc"`},
		{"int float", "sandbox: {max_concurrent: 1.5}", "sandbox.max_concurrent", "expected an integer, got 1.5"},
		{"bool", "run_code: {enabled: maybe}", "run_code.enabled", `expected true or false, got "maybe"`},
		{"string", "server: {http: [a]}", "server.http", "expected a string, got a list"},
		{"list", "backends: {x: {command: a, args: '-v'}}", "backends.x.args", `expected a list of strings, got "-v"`},
		{"list item", "backends: {x: {command: a, args: [a, {b: c}]}}", "backends.x.args[1]", "expected a string, got a map"},
		{"map", "backends: {x: {command: a, env: [A=b]}}", "backends.x.env", "expected a map, got a list"},
		{"section", "sandbox: 5", "sandbox", "expected a map, got 5"},
		{"backends", "backends: [a, b]", "backends", "expected a map, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, "isogate.yaml", tt.yaml)
			_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
			wantProblem(t, err, tt.key, tt.msg)
			if err != nil && !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error does not start with the file name:\n%v", err)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct{ yaml, key, msg string }{
		{"sandbox: {timout: 1s}", "sandbox.timout", `unknown key "sandbox.timout" (did you mean "sandbox.timeout"?)`},
		{"sandbox: {max_heap: 64}", "sandbox.max_heap", `unknown key "sandbox.max_heap" (did you mean "sandbox.max_heap_mb"?)`},
		{"sandbox: {output: {Footer: true}}", "sandbox.output.Footer", `unknown key "sandbox.output.Footer" (did you mean "sandbox.output.footer"?)`},
		{"server: {log-level: info}", "server.log-level", `unknown key "server.log-level" (did you mean "server.log_level"?)`},
		{"backends: {fs: {command: a, comand: b}}", "backends.fs.comand", `unknown key "backends.fs.comand" (did you mean "backends.fs.command"?)`},
		{"servr: {}", "servr", `unknown key "servr" (did you mean "server"?)`},
		// Issue 33 (6): a transposition in a short key ("evn") is one edit.
		{"backends: {fs: {command: a, evn: {A: b}}}", "backends.fs.evn", `unknown key "backends.fs.evn" (did you mean "backends.fs.env"?)`},
		{"backends: {fs: {command: a, agrs: [b]}}", "backends.fs.agrs", `unknown key "backends.fs.agrs" (did you mean "backends.fs.args"?)`},
		{"sandbox: {frobnicate: 1}", "sandbox.frobnicate", `unknown key "sandbox.frobnicate"`},
		{"mcp_servers: {}", "mcp_servers", `unknown key "mcp_servers"`},
		{"backends: {x: {command: a, type: stdio}}", "backends.x.type", `unknown key "backends.x.type" (did you mean "backends.x.transport"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			path := writeConfig(t, "isogate.yaml", tt.yaml)
			_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
			ps := problemsOf(t, err)
			if len(ps) != 1 || ps[0].Key != tt.key || ps[0].Message != tt.msg {
				t.Fatalf("got %#v\nwant key %q message %q", ps, tt.key, tt.msg)
			}
			if want := path + ": " + tt.msg; err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestAllProblemsTogether(t *testing.T) {
	path := writeConfig(t, "isogate.yaml", `
sandbox:
  timout: 1s
  max_heap_mb: 2
backends:
  fs:
    transport: stdoi
`)
	_, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	want := strings.Join([]string{
		path + `: backends.fs.transport: must be one of stdio, streamable-http, sse (got "stdoi")`,
		path + `: sandbox.max_heap_mb: must be between 8 and 4096 (got 2)`,
		path + `: unknown key "sandbox.timout" (did you mean "sandbox.timeout"?)`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant\n%v", err, want)
	}
}

func TestValidate(t *testing.T) {
	cfg := Default()
	cfg.Backends["ok"] = Backend{Name: "ok", Command: "srv", Timeout: time.Second, MaxConcurrentCalls: 1, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions}
	cfg.Backends["bad"] = Backend{Name: "bad", Transport: TransportSSE, Timeout: time.Second, MaxConcurrentCalls: 1, Sessions: SessionsAuto, MaxSessions: DefaultBackendMaxSessions}
	cfg.Sandbox.MaxHeapMB = 1
	err := cfg.Validate()
	ps := problemsOf(t, err)
	if len(ps) != 2 {
		t.Fatalf("got %v", err)
	}
	wantProblem(t, err, "backends.bad", "sse transport needs url")
	wantProblem(t, err, "sandbox.max_heap_mb", "must be between 8 and 4096 (got 1)")
	if !strings.HasPrefix(err.Error(), "config: ") {
		t.Errorf("Error() without a file should start with \"config: \": %v", err)
	}
}

// TestBackendValidate: one backend is held to the rules Config.Validate
// applies to each of a configuration's backends, under the same keys.
func TestBackendValidate(t *testing.T) {
	if err := (Backend{Name: "ok", Command: "srv", Timeout: time.Second, MaxConcurrentCalls: 1, Sessions: SessionsAuto, MaxSessions: 1}).Validate(); err != nil {
		t.Errorf("valid backend: %v", err)
	}
	bad := Backend{Name: "bad", Transport: TransportSSE, Command: "srv", Timeout: time.Second, MaxConcurrentCalls: 2000}
	err := bad.Validate()
	wantProblem(t, err, "backends.bad", "sse transport needs url")
	wantProblem(t, err, "backends.bad.command", "only used by the stdio transport")
	wantProblem(t, err, "backends.bad.max_concurrent_calls", "must be between 1 and 1024 (got 2000)")
	cfg := Default()
	cfg.Backends["bad"] = bad
	if whole := cfg.Validate(); whole == nil || whole.Error() != err.Error() {
		t.Errorf("Backend.Validate = %v, Config.Validate = %v", err, whole)
	}
}

func TestHelpers(t *testing.T) {
	cfg := mustLoadYAML(t, `
server: {log_level: warn}
backends:
  zeta: {command: z, tags: [local], env: {B: "2", A: "1"}}
  alpha: {url: "https://e.com", disabled: true}
  mid: {transport: sse, url: "https://e.com/sse"}
`)
	if got := cfg.BackendNames(); !slices.Equal(got, []string{"alpha", "mid", "zeta"}) {
		t.Errorf("BackendNames = %v", got)
	}
	var enabled []string
	for _, b := range cfg.EnabledBackends() {
		enabled = append(enabled, b.Name)
	}
	if !slices.Equal(enabled, []string{"zeta", "mid"}) { // the file's order
		t.Errorf("EnabledBackends = %v", enabled)
	}
	z, a, m := cfg.Backends["zeta"], cfg.Backends["alpha"], cfg.Backends["mid"]
	if z.Remote() || !a.Remote() || !m.Remote() {
		t.Errorf("Remote: zeta %v alpha %v mid %v", z.Remote(), a.Remote(), m.Remote())
	}
	if !z.HasTag("local") || z.HasTag("remote") {
		t.Errorf("HasTag wrong for %v", z.Tags)
	}
	base := []string{"PATH=/bin", "A=old", "HOME=/h"}
	if got, want := z.Environ(base), []string{"PATH=/bin", "HOME=/h", "A=1", "B=2"}; !slices.Equal(got, want) {
		t.Errorf("Environ = %v, want %v", got, want)
	}
	if base[1] != "A=old" {
		t.Errorf("Environ modified its argument")
	}
	if cfg.Server.SlogLevel() != slog.LevelWarn {
		t.Errorf("SlogLevel = %v", cfg.Server.SlogLevel())
	}
	for level, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "error": slog.LevelError} {
		if got := (ServerConfig{LogLevel: level}).SlogLevel(); got != want {
			t.Errorf("SlogLevel(%q) = %v", level, got)
		}
	}
}

func TestCwd(t *testing.T) {
	path := writeConfig(t, "isogate.yaml", "backends: {a: {command: x, cwd: sub}, b: {command: x, cwd: /abs}, c: {command: x}}")
	cfg, err := Load(LoadOptions{Path: path, Environ: testEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Backends["a"].Cwd, filepath.Join(filepath.Dir(path), "sub"); got != want {
		t.Errorf("relative cwd = %q, want %q", got, want)
	}
	if cfg.Backends["b"].Cwd != "/abs" || cfg.Backends["c"].Cwd != "" {
		t.Errorf("cwd b=%q c=%q", cfg.Backends["b"].Cwd, cfg.Backends["c"].Cwd)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"timeout", "max_heap_mb", "max_concurrent", "max_output_size", "isolation", "output"}
	tests := map[string]string{
		"timout":        "timeout",
		"timeuot":       "timeout",
		"TIMEOUT":       "timeout",
		"max-heap-mb":   "max_heap_mb",
		"max_heap":      "max_heap_mb",
		"max_concurent": "max_concurrent",
		"isolaton":      "isolation",
		"outptu":        "output",
		"xyz":           "",
		"colour":        "",
		"memory_limit":  "",
		"output_size":   "",
	}
	for in, want := range tests {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// Values at the edges of what is allowed load without problems.
func TestAcceptedValues(t *testing.T) {
	tests := []string{
		"server: {http: ':0'}",
		"server: {http: '[::1]:8787', log_level: debug, log_format: json}",
		"server: {http: 'localhost:65535', auth_token: 'a b $c'}",
		"sandbox: {max_heap_mb: 8, isolation: thread, trusted_code: true}",
		"sandbox: {isolation: process, trusted_code: true}",
		"sandbox: {max_heap_mb: 4096, max_concurrent: 1, max_output_size: 1}",
		"sandbox: {max_heap_mb: '64', output: {intent_min_bytes: 0, footer: 'false'}}",
		"run_code: {fetch: {allow_hosts: ['x.com:8443', '*.x.com', '10.0.0.1', '[::1]:80', '::1'], allow_private: true}}",
		"run_code: {enabled: false, weather: {enabled: true, base_url: 'http://127.0.0.1:8080'}}",
		"backends: {x: {command: a, env: {PORT: 8080, DEBUG: true, EMPTY: }}}",
		"backends: {x: {url: 'https://e.com', headers: {X-Api-Key: k, Accept: 'a, b'}}}",
		"backends: {x_1-2: {command: a, timeout: 1ms, max_concurrent_calls: 1000}}",
		"backends: {x: {command: a, args: []}}",
		"backends: {}",
		"backends:",
		"sandbox:",
	}
	for _, yaml := range tests {
		if _, err := loadYAML(t, yaml); err != nil {
			t.Errorf("%s: %v", yaml, err)
		}
	}
}

func TestExposeValidated(t *testing.T) {
	for _, e := range Exposes {
		c := Default()
		c.Server.Expose = e
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
	c := Default()
	c.Server.Expose = "all"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "server.expose") {
		t.Errorf("expose: all: %v", err)
	}
}
