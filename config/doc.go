// Package config holds the typed configuration of the isogate gateway and
// loads it from one file, the environment and command-line flags.
//
// # Sources and precedence
//
// [Load] builds a [Config] from, in increasing order of precedence:
//
//  1. built-in defaults (see [Default]);
//  2. one configuration file;
//  3. ISOGATE_* environment variables;
//  4. command-line flags the user actually set (see [RegisterFlags]).
//
// # The file
//
// The file is the one named by --config, else [LoadOptions.Path], else
// [DefaultPath] ($XDG_CONFIG_HOME/isogate/isogate.yaml, falling back to
// ~/.config/isogate/isogate.yaml). A missing default file is fine and yields
// the defaults; a missing file that was named explicitly is an error.
//
// The format follows the extension: .json is JSON, .toml is TOML, anything
// else (.yaml, .yml, none) is YAML. Durations are Go duration strings ("30s",
// "15m").
//
// A Claude-style file, {"mcpServers": {"name": {"command": ..., "args": [...],
// "env": {...}}}}, is accepted as-is and detected by its top-level
// "mcpServers" key. Entries with "command" become stdio backends, entries with
// "url" become streamable-http backends (keeping "headers"), or sse backends
// when "type" is "sse". "cwd" and "disabled" are kept too. Such a file cannot
// also hold isogate sections (server, backends, sandbox, run_code); other
// keys of that foreign format (in the file or in an entry) are ignored.
//
// # Environment variables
//
// An environment variable ISOGATE_<PATH> overrides the key <PATH>, where a
// double underscore "__" separates nesting levels and each level is
// lower-cased:
//
//	ISOGATE_SANDBOX__MAX_HEAP_MB=64           sandbox.max_heap_mb = 64
//	ISOGATE_SERVER__AUTH_TOKEN=x              server.auth_token = "x"
//	ISOGATE_RUN_CODE__FETCH__ALLOW_HOSTS=a,b  run_code.fetch.allow_hosts = [a, b]
//	ISOGATE_BACKENDS__GH__URL=https://...     backends.gh.url = "https://..."
//
// Lists are given comma-separated. Keys under backends.<name>.env and
// backends.<name>.headers keep their case (ISOGATE_BACKENDS__GH__ENV__GH_TOKEN
// sets the variable GH_TOKEN); every other level is lower-cased, so only
// lower-case backend names can be addressed from the environment. Variables
// with no "__" (such as ISOGATE_CONFIG) are not overrides and are left alone,
// because there are no top-level scalar keys. An override for an unknown key
// is reported like one in the file.
//
// # Flags
//
// [RegisterFlags] adds --config, --log-level, --log-format and --http to a
// flag set ([RegisterFileFlags] all but --http, for commands that do not
// serve). Only flags the user changed apply, mapped to server.log_level,
// server.log_format and server.http.
//
// # Variable expansion
//
// ${VAR} is replaced with the value of the environment variable VAR in
// server.auth_token and, per backend, in command, args, env values, url and
// header values. Only the braced form is expanded: a lone "$" stays as it is,
// and "$${" stands for a literal "${". A variable that is not set expands to
// "" and is reported as a problem (except in disabled backends).
//
// # Errors
//
// Problems with the content of the configuration (wrong types, values out of
// range, unknown keys, unset variables) are collected and returned together
// as one [*ValidationError]; each names the file and the full key path. A
// file that cannot be read or parsed is reported with a plain error.
package config
