package config

import "fmt"

// mcpServersKey is the top-level key of a Claude-style configuration file.
const mcpServersKey = "mcpServers"

// isogateSections are the top-level keys of an isogate configuration.
var isogateSections = []string{"server", "backends", "sandbox", "run_code"}

// mcpServerFields are the keys of an mcpServers entry carried over to the
// backend as they are. Other keys of the entry belong to other clients and
// are ignored.
var mcpServerFields = []string{"command", "args", "env", "cwd", "url", "headers", "disabled"}

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
			c.addRaw(k, fmt.Sprintf("cannot be combined with %s: a file is either an isogate configuration or a Claude-style %s file", mcpServersKey, mcpServersKey))
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
