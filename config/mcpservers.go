package config

import (
	"fmt"
	"maps"
	"slices"
)

// mcpServersKey is the top-level key of a Claude-style configuration file.
const mcpServersKey = "mcpServers"

// isogateSections are the top-level keys of an isogate configuration.
var isogateSections = []string{"server", "backends", "sandbox", "run_code"}

// mcpServerFields are the keys of an mcpServers entry carried over to the
// backend as they are.
var mcpServerFields = []string{"command", "args", "env", "cwd", "url", "headers", "disabled", "description"}

// mcpServerIgnored are keys other clients write in an entry that change
// nothing for isogate (per-client approval lists): accepted and ignored. Any other key is refused, so that a typo ("enviroment")
// is not silently dropped.
var mcpServerIgnored = []string{"alwaysAllow", "autoApprove"}

// importKey is the key of an isogate file that imports a Claude-style
// file's servers as its backends (see Load).
const importKey = "import"

// mcpEntryKey suggests the entry key closest to an unknown one, also
// through the names other tools use (keyAliases: "environment" → env).
func mcpEntryKey(name string, known []string) string {
	if s := suggest(name, known); s != "" {
		return s
	}
	if a := suggest(name, slices.Sorted(maps.Keys(keyAliases))); a != "" && slices.Contains(known, keyAliases[a]) {
		return keyAliases[a]
	}
	return ""
}

// fromMCPServers turns a Claude-style file,
//
//	{"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}}}}
//
// into the isogate form {"backends": {"name": {...}}}. An entry's "type"
// ("stdio", "http", "streamable-http" or "sse") becomes its transport; without
// one the transport follows from command or url as in any isogate file.
func (c *collector) fromMCPServers(raw map[string]any) map[string]any {
	for _, k := range isogateSections {
		if _, ok := raw[k]; ok {
			c.addRaw(k, fmt.Sprintf("cannot be combined with %s: a file is either an isogate configuration or a Claude-style %s file. "+
				"To add isogate settings to these servers, write an isogate file (e.g. isogate.yaml) with `%s: <this file>` and your settings, "+
				"and load that one (--config isogate.yaml); see docs/configuration.md#importing-an-mcpservers-file", mcpServersKey, mcpServersKey, importKey))
		}
	}
	servers, ok := raw[mcpServersKey].(map[string]any)
	if !ok {
		if raw[mcpServersKey] != nil {
			c.addRaw(mcpServersKey, "expected a map of server names to servers, got "+describe(raw[mcpServersKey]))
		}
		return nil
	}
	backends := make(map[string]any, len(servers))
	for _, name := range sortedKeys(servers) {
		key := joinKey(mcpServersKey, name)
		entry, ok := servers[name].(map[string]any)
		if !ok {
			if servers[name] != nil {
				c.addRaw(key, "expected a map with command or url, got "+describe(servers[name]))
				continue
			}
			entry = map[string]any{}
		}
		known := append(slices.Clone(mcpServerFields), "type")
		for _, k := range sortedKeys(entry) {
			if slices.Contains(known, k) || slices.Contains(mcpServerIgnored, k) {
				continue
			}
			msg := fmt.Sprintf("unknown key %q", joinKey(key, k))
			if s := mcpEntryKey(k, known); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", joinKey(key, s))
			}
			c.addRaw(joinKey(key, k), msg+"; an entry takes "+fmt.Sprint(known))
		}
		b := map[string]any{}
		for _, f := range mcpServerFields {
			if v, ok := entry[f]; ok {
				b[f] = v
			}
		}
		if t, ok := entry["type"]; ok && t != nil {
			switch t {
			case "stdio":
				b["transport"] = string(TransportStdio)
			case "http", "streamable-http", "streamableHttp":
				b["transport"] = string(TransportStreamableHTTP)
			case "sse":
				b["transport"] = string(TransportSSE)
			default:
				c.addRaw(key+".type", "must be one of stdio, http, streamable-http, sse (got "+describe(t)+")")
			}
		}
		backends[name] = b
	}
	return map[string]any{"backends": backends}
}
