package output

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jsonscan"
	"github.com/isogate/isogate/internal/jssyntax"
	"github.com/isogate/isogate/internal/textcut"
)

// jkind is the JSON type of a jval.
type jkind uint8

const (
	kNull jkind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// String returns the JSON type name used in summaries.
func (k jkind) String() string {
	switch k {
	case kNull:
		return "null"
	case kBool:
		return "boolean"
	case kNumber:
		return "number"
	case kString:
		return "string"
	case kArray:
		return "array"
	default:
		return "object"
	}
}

// jval is an order-preserving JSON tree. encoding/json's map decoding loses
// key order, which matters when an agent reads a summary or a filtered
// document, so the pipeline parses into this instead.
type jval struct {
	kind jkind
	s    string   // string value, number literal, or "true"/"false"
	keys []string // object keys in document order (parallel to vals)
	vals []*jval  // object values or array items
	size int      // length in bytes of the compact encoding
}

// parseJSON parses s when it is a JSON object or array (surrounding
// whitespace allowed). Scalars and invalid JSON report false: the pipeline
// only restructures containers.
//
// jsonscan.Valid checks the syntax (including its nesting limit) first, unless
// the caller knows s is valid; the tree is then built by a small scanner
// that can trust the syntax. That is several times faster than
// json.Decoder.Token, which matters for the multi-megabyte results the
// pipeline exists to shrink.
func parseJSON(s string, valid bool) (*jval, bool) {
	t := strings.Trim(s, jsonSpace)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	if !valid && !jsonscan.Valid([]byte(t)) {
		return nil, false
	}
	p := parser{s: t}
	return p.value(), true
}

// jsonSpace is the whitespace JSON allows around values.
const jsonSpace = " \t\r\n"

// parser builds a jval tree from text already known to be valid JSON.
type parser struct {
	s string
	i int
	// slab hands out nodes a few hundred at a time; keys and vals hold the
	// members of the containers being read, copied out at their end.
	// A multi-megabyte result has hundreds of thousands of values, and
	// one allocation each (plus the growth of every member slice) was
	// most of the parse.
	slab []jval
	keys []string
	vals []*jval
	// valSlab and keySlab hand out the member slices of finished
	// containers the same way (capped, so an append to one copies it);
	// lastKeys is the key list of the last object finished, which the
	// next object with the same keys shares (records repeat one key list).
	valSlab  []*jval
	keySlab  []string
	lastKeys []string
}

// node returns a new value of kind k.
func (p *parser) node(k jkind) *jval {
	if len(p.slab) == 0 {
		p.slab = make([]jval, 256)
	}
	v := &p.slab[0]
	p.slab = p.slab[1:]
	v.kind = k
	return v
}

// mark is where the members of a container start on parser.keys and
// parser.vals.
type mark struct{ keys, vals int }

func (p *parser) mark() mark { return mark{len(p.keys), len(p.vals)} }

// members moves the members read since m into v.
func (p *parser) members(v *jval, m mark) {
	vals := p.vals[m.vals:]
	if len(vals) > len(p.valSlab) {
		p.valSlab = make([]*jval, max(len(vals), 1024))
	}
	v.vals = p.valSlab[:len(vals):len(vals)]
	p.valSlab = p.valSlab[len(vals):]
	copy(v.vals, vals)
	clear(vals)
	p.vals = p.vals[:m.vals]
	if v.kind == kObject {
		keys := p.keys[m.keys:]
		if slices.Equal(keys, p.lastKeys) {
			v.keys = p.lastKeys
		} else {
			if len(keys) > len(p.keySlab) {
				p.keySlab = make([]string, max(len(keys), 1024))
			}
			v.keys = p.keySlab[:len(keys):len(keys)]
			p.keySlab = p.keySlab[len(keys):]
			copy(v.keys, keys)
			p.lastKeys = v.keys
		}
		p.keys = p.keys[:m.keys]
	}
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() *jval {
	p.skipSpace()
	switch p.s[p.i] {
	case '{':
		p.i++
		v, m := p.node(kObject), p.mark()
		p.skipSpace()
		if p.s[p.i] == '}' {
			p.i++
		} else {
			for {
				p.skipSpace()
				k := p.str()
				p.skipSpace()
				p.i++ // ':'
				p.keys = append(p.keys, k)
				p.vals = append(p.vals, p.value())
				p.skipSpace()
				c := p.s[p.i]
				p.i++ // ',' or '}'
				if c == '}' {
					break
				}
			}
			p.members(v, m)
		}
		v.resize()
		return v
	case '[':
		p.i++
		v, m := p.node(kArray), p.mark()
		p.skipSpace()
		if p.s[p.i] == ']' {
			p.i++
		} else {
			for {
				p.vals = append(p.vals, p.value())
				p.skipSpace()
				c := p.s[p.i]
				p.i++ // ',' or ']'
				if c == ']' {
					break
				}
			}
			p.members(v, m)
		}
		v.resize()
		return v
	case '"':
		v := p.node(kString)
		var plain bool
		v.s, plain = p.lit()
		if plain { // no escapes, valid UTF-8, so no control bytes: quoted as it is
			v.size = len(v.s) + 2
		} else {
			v.size = jsonStringLen(v.s)
		}
		return v
	case 't':
		p.i += len("true")
		v := p.node(kBool)
		v.s, v.size = "true", 4
		return v
	case 'f':
		p.i += len("false")
		v := p.node(kBool)
		v.s, v.size = "false", 5
		return v
	case 'n':
		p.i += len("null")
		v := p.node(kNull)
		v.size = 4
		return v
	default:
		start := p.i
		for p.i < len(p.s) && numberByte[p.s[p.i]] {
			p.i++
		}
		v := p.node(kNumber)
		v.s, v.size = p.s[start:p.i], p.i-start
		return v
	}
}

// numberByte marks the bytes a number literal is made of.
var numberByte = func() (t [256]bool) {
	for _, c := range []byte("+-0123456789.eE") {
		t[c] = true
	}
	return t
}()

// str reads the string literal at p.i and returns its value.
func (p *parser) str() string {
	s, _ := p.lit()
	return s
}

// lit reads the string literal at p.i and returns its value, and whether
// it was plain: without escapes and valid UTF-8. Plain literals are sliced
// from the input; others (and invalid UTF-8, which encoding/json replaces
// with U+FFFD) go through encoding/json.
func (p *parser) lit() (string, bool) {
	start := p.i + 1
	j, escaped, ascii := start, false, true
	for {
		c := p.s[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			escaped = true
			j++
		} else if c >= utf8.RuneSelf {
			ascii = false
		}
		j++
	}
	p.i = j + 1
	lit := p.s[start:j]
	if !escaped && (ascii || utf8.ValidString(lit)) {
		return lit, true
	}
	var out string
	json.Unmarshal([]byte(p.s[start-1:j+1]), &out) // valid by json.Valid
	return out, false
}

// resize recomputes v.size from its children's sizes (containers only).
func (v *jval) resize() {
	switch v.kind {
	case kArray:
		n := 2
		for i, c := range v.vals {
			if i > 0 {
				n++
			}
			n += c.size
		}
		v.size = n
	case kObject:
		n := 2
		for i, c := range v.vals {
			if i > 0 {
				n++
			}
			n += jsonStringLen(v.keys[i]) + 1 + c.size
		}
		v.size = n
	}
}

func (v *jval) isContainer() bool { return v.kind == kArray || v.kind == kObject }

// compact returns the compact encoding of v. Strings longer than clip bytes
// (clip > 0) are shortened and end in "…(+N bytes)".
func (v *jval) compact(clip int) string {
	return string(v.appendCompact(nil, clip))
}

func (v *jval) appendCompact(b []byte, clip int) []byte {
	switch v.kind {
	case kNull:
		return append(b, "null"...)
	case kBool, kNumber:
		return append(b, v.s...)
	case kString:
		return appendJSONString(b, v.s, clip)
	case kArray:
		b = append(b, '[')
		for i, c := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = c.appendCompact(b, clip)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, c := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v.keys[i], 0)
			b = append(b, ':')
			b = c.appendCompact(b, clip)
		}
		return append(b, '}')
	}
}

// appendIndent appends v pretty-printed with two-space indentation, the
// same layout as json.MarshalIndent(v, "", "  ").
func (v *jval) appendIndent(b []byte, depth int) []byte {
	nl := func(b []byte, d int) []byte {
		b = append(b, '\n')
		for range d {
			b = append(b, "  "...)
		}
		return b
	}
	switch v.kind {
	case kArray:
		if len(v.vals) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, c := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = nl(b, depth+1)
			b = c.appendIndent(b, depth+1)
		}
		b = nl(b, depth)
		return append(b, ']')
	case kObject:
		if len(v.vals) == 0 {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		for i, c := range v.vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = nl(b, depth+1)
			b = appendJSONString(b, v.keys[i], 0)
			b = append(b, ": "...)
			b = c.appendIndent(b, depth+1)
		}
		b = nl(b, depth)
		return append(b, '}')
	default:
		return v.appendCompact(b, 0)
	}
}

// pretty returns v pretty-printed with two-space indentation.
func (v *jval) pretty() string { return string(v.appendIndent(nil, 0)) }

// appendJSONString appends s as a JSON string literal, quoted as
// JSON.stringify does. When clip > 0 and s is longer than clip bytes, s is
// cut at a rune boundary and "…(+N bytes)" is appended inside the quotes.
func appendJSONString(b []byte, s string, clip int) []byte {
	if clip > 0 && len(s) > clip {
		kept := textcut.Prefix(s, clip)
		s = kept + "…(+" + strconv.Itoa(len(s)-len(kept)) + " bytes)"
	}
	return jssyntax.AppendString(b, s)
}

// jsonStringLen is len(appendJSONString(nil, s, 0)) without allocating.
func jsonStringLen(s string) int { return jssyntax.StringLen(s) }
