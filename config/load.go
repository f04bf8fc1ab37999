package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
)

// LoadOptions says where Load reads the configuration from. The zero value
// loads the default file, the process environment and no flags.
type LoadOptions struct {
	// Path is the configuration file to load; it must exist. A --config
	// flag set in Flags takes precedence. If both are empty, DefaultPath
	// is loaded if it exists.
	Path string
	// Flags, if non-nil, is a parsed flag set on which RegisterFlags was
	// called. Only the flags the user set are applied; other flags in the
	// set are ignored.
	Flags *pflag.FlagSet
	// LookupEnv resolves ${VAR} references and the variables the default
	// paths depend on (XDG_CONFIG_HOME, XDG_CACHE_HOME, HOME). If nil, it
	// looks variables up in Environ, or in the process environment if
	// Environ is nil too.
	LookupEnv func(string) (string, bool)
	// Environ is the environment, in os.Environ form ("KEY=value"), that
	// ISOGATE_* overrides are read from. If nil, the process environment is
	// used, unless LookupEnv is set: then no overrides are read, so that a
	// test setting only LookupEnv never sees the process environment.
	Environ []string
}

// EnvPrefix starts the name of every environment variable that overrides a
// configuration key.
const EnvPrefix = "ISOGATE_"

// flagKeys maps the flags RegisterFlags adds to the keys they set.
var flagKeys = map[string]string{
	"log-level":  "server.log_level",
	"log-format": "server.log_format",
	"http":       "server.http",
}

// RegisterFlags adds the configuration flags to fs: --config FILE,
// --log-level LEVEL, --log-format FORMAT and --http ADDR. Pass fs, once
// parsed, as LoadOptions.Flags.
func RegisterFlags(fs *pflag.FlagSet) {
	RegisterFileFlags(fs)
	fs.String("http", "", "serve streamable HTTP on `addr`, such as 127.0.0.1:8787, instead of stdio (overrides server.http)")
}

// RegisterFileFlags adds the configuration flags of a command that does not
// serve (where --http would mean nothing): --config FILE, --log-level LEVEL
// and --log-format FORMAT. Pass fs, once parsed, as LoadOptions.Flags.
func RegisterFileFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "configuration `file` (default $XDG_CONFIG_HOME/isogate/isogate.yaml)")
	fs.String("log-level", "", "log `level`: debug, info, warn or error (overrides server.log_level)")
	fs.String("log-format", "", "log `format`: text or json (overrides server.log_format)")
}

// Load reads the configuration: defaults, then one file, then ISOGATE_*
// environment variables, then flags, each overriding the ones before (see
// the package documentation). It expands ${VAR} references and validates
// the result.
//
// A file that is missing (unless it is the default one), unreadable or not
// valid YAML, JSON or TOML is reported with an ordinary error. Any problem
// with the content is reported, along with all others, in a
// *ValidationError.
func Load(opts LoadOptions) (*Config, error) {
	lookup, environ := opts.environment()
	path, explicit := opts.path(lookup)
	col := newCollector()
	ko := koanf.New(".")

	source := ""
	var backendOrder []string // the file's order of the backends
	if path != "" {
		raw, order, err := readFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			// No default file: defaults, environment and flags only.
		case err != nil:
			return nil, err
		default:
			source = path
			backendOrder = order["backends"]
			if _, ok := raw[mcpServersKey]; ok {
				col.mcp = true
				raw = col.fromMCPServers(raw)
				backendOrder = order[mcpServersKey]
			} else if imp, ok := raw[importKey]; ok && imp != nil {
				var imported []string
				if raw, imported, err = col.importServers(path, raw, imp); err != nil {
					return nil, err
				}
				backendOrder = append(imported, backendOrder...)
			}
			if err := ko.Load(mapProvider(raw), nil); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
	}
	if environ != nil {
		p := env.Provider(".", env.Opt{
			Prefix:        EnvPrefix,
			TransformFunc: col.envKey,
			EnvironFunc:   func() []string { return environ },
		})
		if err := ko.Load(p, nil); err != nil {
			return nil, fmt.Errorf("reading environment: %w", err)
		}
	}
	if opts.Flags != nil {
		if err := ko.Load(posflag.ProviderWithFlag(opts.Flags, ".", nil, col.flagKey), nil); err != nil {
			return nil, fmt.Errorf("reading flags: %w", err)
		}
	}

	cfg := defaults(lookup)
	cfg.Source = source
	col.decode("", ko.Raw(), reflect.ValueOf(cfg).Elem())
	cfg.Order = ordered(backendOrder, cfg.Backends)
	finish(cfg, lookup)
	bad := col.expand(cfg, lookup)
	col.validate(cfg, bad)
	if err := col.err(source); err != nil {
		return nil, err
	}
	resolvePaths(cfg)
	return cfg, nil
}

// environment returns the lookup function and the override environment
// opts describe.
func (opts LoadOptions) environment() (func(string) (string, bool), []string) {
	environ := opts.Environ
	lookup := opts.LookupEnv
	switch {
	case environ == nil && lookup == nil:
		return os.LookupEnv, os.Environ()
	case lookup == nil:
		m := make(map[string]string, len(environ))
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
		lookup = func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	return lookup, environ
}

// path returns the file to load and whether it was named explicitly.
func (opts LoadOptions) path(lookup func(string) (string, bool)) (string, bool) {
	if opts.Flags != nil {
		if f := opts.Flags.Lookup("config"); f != nil && f.Changed && f.Value.String() != "" {
			return f.Value.String(), true
		}
	}
	if opts.Path != "" {
		return opts.Path, true
	}
	return defaultPath(lookup), false
}

// readFile reads and parses the configuration file, choosing the parser by
// extension (YAML unless .json or .toml). It also returns the order in which
// the file writes the keys of backends and of mcpServers (see keyOrder).
func readFile(path string) (map[string]any, map[string][]string, error) {
	var (
		parser koanf.Parser = yaml.Parser()
		format              = "YAML"
	)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		parser, format = json.Parser(), "JSON"
	case ".toml":
		parser, format = toml.Parser(), "TOML"
	}
	b, err := file.Provider(path).ReadBytes()
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	m, err := parser.Unmarshal(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not valid %s: %w", path, format, syntaxError(format, b, err))
	}
	// Loading into koanf turns YAML's map[any]any into map[string]any.
	ko := koanf.New(".")
	if err := ko.Load(mapProvider(m), nil); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ko.Raw(), keyOrder(format, b, "backends", mcpServersKey), nil
}

// importServers applies an isogate file's import key: the Claude-style
// mcpServers file it names (relative to the isogate file) gives the
// backends, and the isogate file's own backends.<name> settings are laid
// over them key by key (add a timeout or a policy to an imported server,
// or declare more backends). The key keeps the imported file's path. It
// also returns the order of the imported servers in their file.
func (c *collector) importServers(path string, raw map[string]any, imp any) (map[string]any, []string, error) {
	name, ok := imp.(string)
	if !ok || name == "" {
		c.addRaw(importKey, "expected the path of a Claude-style mcpServers file, got "+describe(imp))
		delete(raw, importKey)
		return raw, nil, nil
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(path), name)
	}
	imported, order, err := readFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", path, importKey, err)
	}
	// Problems inside the imported file say which file they are in.
	before := len(c.problems)
	defer func() {
		for i := before; i < len(c.problems); i++ {
			c.problems[i].Message += " (in " + name + ", imported)"
		}
	}()
	if _, ok := imported[mcpServersKey]; !ok {
		c.addRaw(importKey, fmt.Sprintf("%s has no %q key: import takes a Claude-style mcpServers file", name, mcpServersKey))
		delete(raw, importKey)
		return raw, nil, nil
	}
	backends, _ := c.fromMCPServers(imported)["backends"].(map[string]any)
	if backends == nil {
		backends = map[string]any{}
	}
	own, _ := raw["backends"].(map[string]any)
	for n, v := range own {
		base, okBase := backends[n].(map[string]any)
		over, okOver := v.(map[string]any)
		if !okBase || !okOver {
			backends[n] = v
			continue
		}
		merged := maps.Clone(base)
		maps.Copy(merged, over)
		backends[n] = merged
	}
	raw["backends"] = backends
	raw[importKey] = name
	return raw, order[mcpServersKey], nil
}

// envKey maps ISOGATE_A__B_C to the key "a.b_c" and records the override.
// Variables without "__" are not overrides and are skipped.
func (c *collector) envKey(name, value string) (string, any) {
	rest := strings.TrimPrefix(name, EnvPrefix)
	if !strings.Contains(rest, "__") {
		return "", nil
	}
	segs := strings.Split(rest, "__")
	key := ""
	for i, s := range segs {
		if s == "" {
			c.addRaw("", fmt.Sprintf(`environment variable %s: empty key between "__" separators`, name))
			return "", nil
		}
		// Keys of backends.<name>.env and .headers are names chosen by
		// the user: keep their case.
		if !(i == 3 && strings.EqualFold(segs[0], "backends") &&
			(strings.EqualFold(segs[2], "env") || strings.EqualFold(segs[2], "headers"))) {
			segs[i] = strings.ToLower(s)
		}
		key = joinKey(key, segs[i])
	}
	c.origins[key] = "environment variable " + name
	return strings.Join(segs, "."), value
}

// flagKey maps a flag RegisterFlags added, if the user set it, to its key
// and records the override.
func (c *collector) flagKey(f *pflag.Flag) (string, any) {
	key, ok := flagKeys[f.Name]
	if !ok || !f.Changed {
		return "", nil
	}
	c.origins[key] = "flag --" + f.Name
	return key, f.Value.String()
}

// finish fills in what follows from the loaded values.
func finish(cfg *Config, lookup func(string) (string, bool)) {
	for name, b := range cfg.Backends {
		b.Name = name
		if b.Transport == "" {
			b.Transport = deriveTransport(b)
		}
		cfg.Backends[name] = b
	}
	if cfg.Server.CacheDir == "" {
		cfg.Server.CacheDir = defaultCacheDir(lookup)
	}
	for i, h := range cfg.RunCode.Fetch.AllowHosts {
		cfg.RunCode.Fetch.AllowHosts[i] = strings.ToLower(strings.TrimSpace(h))
	}
}

// resolvePaths makes relative backend working directories and the record
// directory relative to the configuration file's directory.
func resolvePaths(cfg *Config) {
	if cfg.Source == "" {
		return
	}
	dir := filepath.Dir(cfg.Source)
	if d := cfg.Server.RecordDir; d != "" && !filepath.IsAbs(d) {
		cfg.Server.RecordDir = filepath.Join(dir, d)
	}
	for name, b := range cfg.Backends {
		if b.Cwd != "" && !filepath.IsAbs(b.Cwd) {
			b.Cwd = filepath.Join(dir, b.Cwd)
			cfg.Backends[name] = b
		}
	}
}

// mapProvider is a koanf.Provider of an already parsed map.
type mapProvider map[string]any

func (m mapProvider) ReadBytes() ([]byte, error) { return nil, errors.New("not supported") }
func (m mapProvider) Read() (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	return m, nil
}
