// Package jsonscan validates and indents JSON text several times faster
// than encoding/json's state machine, with the same answers: [Valid]
// accepts exactly what json.Valid accepts (its nesting limit included) and
// [AppendIndent] writes what json.Indent writes. It exists for the large
// values (tool results, program results) that cross the gateway as JSON
// text and are checked or re-indented once on the way, where encoding/json
// spends 15–20 ms per MB.
package jsonscan

import "errors"

// maxDepth is encoding/json's nesting limit: 10 000 nested arrays or
// objects are valid, one more is not.
const maxDepth = 10000

// errInvalid is AppendIndent's error for text that is not one JSON value.
var errInvalid = errors.New("jsonscan: invalid JSON")

// Valid reports whether b is one JSON value, surrounding whitespace
// allowed, as json.Valid does.
func Valid(b []byte) bool {
	s := scanner{src: b}
	return s.top()
}

// AppendIndent appends to dst the indented form of src, one element per
// line, each level indented by indent, exactly as json.Indent(buf, src, "",
// indent) writes it, and returns the extended buffer. For text that is not
// one JSON value it returns dst unchanged and an error.
func AppendIndent(dst, src []byte, indent string) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, 2*len(src)+64) // indented records about double in size
	}
	s := scanner{src: src, out: dst, indent: indent, write: true}
	if !s.top() {
		return dst, errInvalid
	}
	return s.out, nil
}

// scanner is a recursive-descent reader of one JSON text that, when write
// is set, writes its indented form to out as it goes.
type scanner struct {
	src    []byte
	i      int
	depth  int
	out    []byte
	indent string
	write  bool
	// lines is "\n" followed by indent repeated, as deep as written so
	// far: a new line at depth d is its first 1+d*len(indent) bytes.
	lines []byte
}

// top reads the whole text: one value between optional whitespace. Like
// json.Indent, it drops the leading whitespace and keeps the trailing.
func (s *scanner) top() bool {
	s.skipSpace()
	if !s.value() {
		return false
	}
	end := s.i
	s.skipSpace()
	if s.i != len(s.src) {
		return false
	}
	if s.write {
		s.out = append(s.out, s.src[end:]...)
	}
	return true
}

func (s *scanner) skipSpace() {
	for s.i < len(s.src) && isSpace(s.src[s.i]) {
		s.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// value reads the value at s.i (whitespace already skipped).
func (s *scanner) value() bool {
	if s.i >= len(s.src) {
		return false
	}
	switch c := s.src[s.i]; c {
	case '{', '[':
		return s.container(c)
	case '"':
		return s.str()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

// container reads an object or array opening with c. Like json.Indent it
// writes an empty one as {} or [], and every element on a line of its own.
func (s *scanner) container(open byte) bool {
	s.depth++
	if s.depth > maxDepth {
		return false
	}
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.i++
	if s.write {
		s.out = append(s.out, open)
	}
	s.skipSpace()
	if s.i < len(s.src) && s.src[s.i] == closer {
		s.i++
		s.depth--
		if s.write {
			s.out = append(s.out, closer)
		}
		return true
	}
	for {
		if s.write {
			s.newline(s.depth)
		}
		if open == '{' {
			if s.i >= len(s.src) || s.src[s.i] != '"' || !s.str() {
				return false
			}
			s.skipSpace()
			if s.i >= len(s.src) || s.src[s.i] != ':' {
				return false
			}
			s.i++
			if s.write {
				s.out = append(s.out, ':', ' ')
			}
			s.skipSpace()
		}
		if !s.value() {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.src) {
			return false
		}
		switch s.src[s.i] {
		case ',':
			s.i++
			if s.write {
				s.out = append(s.out, ',')
			}
			s.skipSpace()
		case closer:
			s.i++
			s.depth--
			if s.write {
				s.newline(s.depth)
				s.out = append(s.out, closer)
			}
			return true
		default:
			return false
		}
	}
}

// newline starts a line indented depth levels.
func (s *scanner) newline(depth int) {
	n := 1 + depth*len(s.indent)
	if len(s.lines) < n {
		if s.lines == nil {
			s.lines = []byte{'\n'}
		}
		for len(s.lines) < n {
			s.lines = append(s.lines, s.indent...)
		}
	}
	s.out = append(s.out, s.lines[:n]...)
}

// plain marks the bytes a string literal may hold as they are: not the
// closing quote, not a backslash, not a control character. Bytes from 0x80
// up pass unchecked, as encoding/json lets them.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string literal at s.i and writes it as it is.
func (s *scanner) str() bool {
	start := s.i
	i := s.i + 1
	for {
		for i < len(s.src) && plain[s.src[i]] {
			i++
		}
		if i >= len(s.src) {
			return false
		}
		switch s.src[i] {
		case '"':
			i++
			if s.write {
				s.out = append(s.out, s.src[start:i]...)
			}
			s.i = i
			return true
		case '\\':
			if i+1 >= len(s.src) {
				return false
			}
			switch s.src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.src) {
					return false
				}
				for _, h := range s.src[i+2 : i+6] {
					if !isHex(h) {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		default: // a control character
			return false
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at s.i.
func (s *scanner) number() bool {
	src, start, i := s.src, s.i, s.i
	if i < len(src) && src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return false
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return false
		}
		for i < len(src) && isDigit(src[i]) {
			i++
		}
	}
	if s.write {
		s.out = append(s.out, src[start:i]...)
	}
	s.i = i
	return true
}

// literal reads word (true, false or null) at s.i.
func (s *scanner) literal(word string) bool {
	if len(s.src)-s.i < len(word) || string(s.src[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	if s.write {
		s.out = append(s.out, word...)
	}
	return true
}
