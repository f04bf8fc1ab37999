package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A small scanner over JSON the record store handles (written by
// encoding/json): it splits an object into its members and an array into
// its items as written, without decoding the values (encoding/json's
// Decoder did the same at ten times the cost). It does not validate what
// it skips; malformed input ends in an error, never a panic.

var errScan = errors.New("malformed JSON")

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] (a
// quote).
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		}
	}
	return 0, errScan
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errScan
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, nil
				}
			}
		}
		return 0, errScan
	}
	start := i
	for i < len(b) && bytes.IndexByte([]byte(",}] \t\n\r"), b[i]) < 0 {
		i++
	}
	if i == start {
		return 0, errScan
	}
	return i, nil
}

// unquote decodes the JSON string raw (quotes included).
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 {
		return "", errScan
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// members splits a JSON object into its members, in order.
func members(raw []byte) ([]member, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := make([]member, 0, 4)
	for i = skipSpace(raw, i+1); ; i = skipSpace(raw, i) {
		if i < len(raw) && raw[i] == '}' && len(out) == 0 {
			return out, nil
		}
		if i >= len(raw) || raw[i] != '"' {
			return nil, errScan
		}
		end, err := skipString(raw, i)
		if err != nil {
			return nil, err
		}
		key, err := unquote(raw[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, errScan
		}
		i = skipSpace(raw, i+1)
		if end, err = skipValue(raw, i); err != nil {
			return nil, err
		}
		out = append(out, member{key, json.RawMessage(raw[i:end])})
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, errScan
		}
		switch raw[i] {
		case '}':
			return out, nil
		case ',':
			i++
		default:
			return nil, errScan
		}
	}
}

// items splits a JSON array into its items, in order.
func items(raw []byte) ([]json.RawMessage, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	var out []json.RawMessage
	for i = skipSpace(raw, i+1); ; i = skipSpace(raw, i) {
		if i < len(raw) && raw[i] == ']' && len(out) == 0 {
			return out, nil
		}
		end, err := skipValue(raw, i)
		if err != nil {
			return nil, err
		}
		out = append(out, json.RawMessage(raw[i:end]))
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, errScan
		}
		switch raw[i] {
		case ']':
			return out, nil
		case ',':
			i++
		default:
			return nil, errScan
		}
	}
}
