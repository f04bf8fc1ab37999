package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/pelletier/go-toml/v2/unstable"
	"go.yaml.in/yaml/v3"
)

// The parsers koanf uses return maps, which forget the order of their keys;
// the order of the backends in the file is what settles a tool name two of
// them share (server.tool_names bare), so it is read again here from the
// file's bytes. Each reader returns, for each top-level key asked for, the
// keys of the map under it in the order the file writes them (each once, at
// its first appearance). A reader that cannot follow the file returns what
// it found: the file has been parsed already, and its problems are reported
// there.

// keyOrder returns the order of the keys of each map named in tops, read
// from a file in the given format ("YAML", "JSON" or "TOML").
func keyOrder(format string, b []byte, tops ...string) map[string][]string {
	out := map[string][]string{}
	switch format {
	case "JSON":
		jsonKeyOrder(b, tops, out)
	case "TOML":
		tomlKeyOrder(b, tops, out)
	default:
		yamlKeyOrder(b, tops, out)
	}
	return out
}

// addKey appends key to the order of top, unless it is there already.
func addKey(out map[string][]string, top, key string) {
	if !slices.Contains(out[top], key) {
		out[top] = append(out[top], key)
	}
}

// yamlKeyOrder reads the order from a YAML document's node tree.
func yamlKeyOrder(b []byte, tops []string, out map[string][]string) {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		top, value := root.Content[i].Value, root.Content[i+1]
		if !slices.Contains(tops, top) {
			continue
		}
		for value.Kind == yaml.AliasNode && value.Alias != nil {
			value = value.Alias
		}
		if value.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(value.Content); j += 2 {
			if k := value.Content[j]; k.Kind == yaml.ScalarNode && k.Tag != "!!merge" {
				addKey(out, top, k.Value)
			}
		}
	}
}

// jsonKeyOrder reads the order from a JSON object's token stream.
func jsonKeyOrder(b []byte, tops []string, out map[string][]string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return
		}
		top, _ := t.(string)
		if !slices.Contains(tops, top) {
			if skipJSONValue(dec) != nil {
				return
			}
			continue
		}
		if t, err := dec.Token(); err != nil {
			return
		} else if t != json.Delim('{') {
			if d, ok := t.(json.Delim); ok && d == '[' {
				return
			}
			continue
		}
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return
			}
			if k, ok := t.(string); ok {
				addKey(out, top, k)
			}
			if skipJSONValue(dec) != nil {
				return
			}
		}
		if _, err := dec.Token(); err != nil { // the closing brace
			return
		}
	}
}

// skipJSONValue reads past one JSON value.
func skipJSONValue(dec *json.Decoder) error {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil && err != io.EOF {
		return fmt.Errorf("skipping a value: %w", err)
	}
	return nil
}

// tomlKeyOrder reads the order from a TOML document's expressions: the
// tables [top.<name>...] and the keys top.<name>... = ..., and the keys of
// an inline table top = {<name> = ...}.
func tomlKeyOrder(b []byte, tops []string, out map[string][]string) {
	var p unstable.Parser
	p.Reset(b)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = tomlKey(e.Key())
			if len(table) > 1 && slices.Contains(tops, table[0]) {
				addKey(out, table[0], table[1])
			}
		case unstable.KeyValue:
			full := append(slices.Clone(table), tomlKey(e.Key())...)
			if len(full) == 0 || !slices.Contains(tops, full[0]) {
				continue
			}
			if len(full) > 1 {
				addKey(out, full[0], full[1])
				continue
			}
			if v := e.Value(); v.Kind == unstable.InlineTable {
				for it := v.Children(); it.Next(); {
					if kv := it.Node(); kv.Kind == unstable.KeyValue {
						if k := tomlKey(kv.Key()); len(k) > 0 {
							addKey(out, full[0], k[0])
						}
					}
				}
			}
		}
	}
}

// tomlKey returns the parts of a dotted TOML key.
func tomlKey(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// ordered returns the names of m in the given order, then those the order
// lacks, sorted.
func ordered[V any](order []string, m map[string]V) []string {
	var out []string
	for _, n := range order {
		if _, ok := m[n]; ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range sortedKeys(m) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
