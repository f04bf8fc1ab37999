package resultstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Lookup returns the part of the JSON document data addressed by path,
// pretty-printed with two-space indentation (key order and string escapes
// as in data; a string part is returned as a JSON string literal).
//
// The path is a slash-separated list of object keys and array indexes, e.g.
// "results/items/3/name". Empty segments are ignored, so "" and "/" address
// the whole document. A segment is an array index when the current value is
// an array (decimal, zero-based); otherwise it is an object key, matched
// exactly or, failing that, after percent-decoding (so keys containing "/"
// can be written as %2F); of duplicate keys the last wins. Errors wrap
// ErrNotJSON or ErrBadPath.
func Lookup(data []byte, path string) ([]byte, error) {
	cur := json.RawMessage(bytes.Trim(data, " \t\r\n"))
	if !json.Valid(cur) {
		return nil, ErrNotJSON
	}
	var at []string
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		next, err := step(cur, seg)
		if err != nil {
			where := "the top level"
			if len(at) > 0 {
				where = strconv.Quote(strings.Join(at, "/"))
			}
			return nil, fmt.Errorf("%w %q: at %s: %v", ErrBadPath, path, where, err)
		}
		cur = next
		at = append(at, seg)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, cur, "", "  "); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return out.Bytes(), nil
}

// step descends from the JSON value cur by one path segment.
func step(cur json.RawMessage, seg string) (json.RawMessage, error) {
	switch cur[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(cur, &items); err != nil {
			return nil, err
		}
		if strings.TrimLeft(seg, "0123456789") != "" {
			return nil, fmt.Errorf("%q is not an array index (array has %d items)", seg, len(items))
		}
		i, err := strconv.Atoi(seg) // err: too large for an int
		if err != nil || i >= len(items) {
			return nil, fmt.Errorf("index %s out of range (array has %d items)", seg, len(items))
		}
		return items[i], nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(cur, &obj); err != nil {
			return nil, err
		}
		if v, ok := obj[seg]; ok {
			return v, nil
		}
		if dec, err := url.PathUnescape(seg); err == nil {
			if v, ok := obj[dec]; ok {
				return v, nil
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		const maxListed = 20
		more := ""
		if len(keys) > maxListed {
			more = fmt.Sprintf(", … (%d more)", len(keys)-maxListed)
			keys = keys[:maxListed]
		}
		return nil, fmt.Errorf("no key %q (keys: %s%s)", seg, strings.Join(keys, ", "), more)
	default:
		kind := "a number"
		switch cur[0] {
		case '"':
			kind = "a string"
		case 't', 'f':
			kind = "a boolean"
		case 'n':
			kind = "null"
		}
		return nil, fmt.Errorf("value is %s, cannot look up %q", kind, seg)
	}
}
