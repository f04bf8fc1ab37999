package codemode

import (
	"encoding/json"
	"fmt"
)

// callNote is what a durable run's program observed since its previous
// call (bridge.js): the live Date.now() values it read, and the calls
// whose replies it received, in order.
type callNote struct {
	Clock []float64 `json:"c"`
	After []int     `json:"d"`
}

// callArguments splits a bridge call's arguments: backend and tool are
// separate string values, args the tool's argument object, then the
// program's call number and what it observed since its previous call
// (durable runs only; null otherwise).
//
// The bootstrap frames them with JSON.stringify, compact:
// ["backend","tool",{…},seq,null]. That shape is split by hand, without
// reflection (a tool call's largest cost on the Go side before this); any
// other (escapes in a name, a note, another framing) is decoded by
// encoding/json, which also rejects what is not a bridge call.
func callArguments(raw json.RawMessage) (backend, tool string, args json.RawMessage, seq int, note callNote, err error) {
	if backend, tool, args, seq, ok := splitCallArguments(raw); ok {
		return backend, tool, args, seq, callNote{}, nil
	}
	return decodeCallArguments(raw)
}

// decodeCallArguments is callArguments through encoding/json.
func decodeCallArguments(raw json.RawMessage) (backend, tool string, args json.RawMessage, seq int, note callNote, err error) {
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil || len(a) < 3 || len(a) > 5 ||
		json.Unmarshal(a[0], &backend) != nil || json.Unmarshal(a[1], &tool) != nil {
		return "", "", nil, 0, callNote{}, fmt.Errorf("bad tool call arguments")
	}
	if len(a) > 3 && json.Unmarshal(a[3], &seq) != nil {
		return "", "", nil, 0, callNote{}, fmt.Errorf("bad tool call arguments")
	}
	if len(a) > 4 && json.Unmarshal(a[4], &note) != nil {
		return "", "", nil, 0, callNote{}, fmt.Errorf("bad tool call arguments")
	}
	return backend, tool, a[2], seq, note, nil
}

// splitCallArguments reads the usual frame of a call,
// ["backend","tool",{…},seq,null] with names free of escapes and a call
// number of at most nine digits, without allocating but for the names;
// ok is false for anything else. The argument object is delimited, not
// validated: it is JSON.stringify's output, and the pipeline sends it on as
// JSON (which encoding/json checks).
func splitCallArguments(raw []byte) (backend, tool string, args json.RawMessage, seq int, ok bool) {
	i := 0
	next := func(c byte) bool {
		if i < len(raw) && raw[i] == c {
			i++
			return true
		}
		return false
	}
	name := func() (string, bool) {
		if !next('"') {
			return "", false
		}
		start := i
		for ; i < len(raw); i++ {
			switch c := raw[i]; {
			case c == '"':
				s := string(raw[start:i])
				i++
				return s, true
			case c == '\\' || c < 0x20:
				return "", false
			}
		}
		return "", false
	}
	if !next('[') {
		return "", "", nil, 0, false
	}
	if backend, ok = name(); !ok || !next(',') {
		return "", "", nil, 0, false
	}
	if tool, ok = name(); !ok || !next(',') {
		return "", "", nil, 0, false
	}
	end, ok := objectEnd(raw, i)
	if !ok {
		return "", "", nil, 0, false
	}
	args, i = raw[i:end:end], end
	if !next(',') {
		return "", "", nil, 0, false
	}
	digits := 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		seq = seq*10 + int(raw[i]-'0')
		digits++
	}
	if digits == 0 || digits > 9 || (digits > 1 && raw[i-digits] == '0') {
		return "", "", nil, 0, false
	}
	if !next(',') || !next('n') || !next('u') || !next('l') || !next('l') || !next(']') || i != len(raw) {
		return "", "", nil, 0, false
	}
	return backend, tool, args, seq, true
}

// objectEnd is the index just past the JSON object starting at raw[i],
// found by counting brackets outside strings; ok is false when raw[i] is
// not '{' or the object does not end.
func objectEnd(raw []byte, i int) (end int, ok bool) {
	if i >= len(raw) || raw[i] != '{' {
		return 0, false
	}
	depth := 0
	for ; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if i >= len(raw) {
				return 0, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}
