package codemode

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jssyntax"
)

// maxJSONDepth bounds the nesting canonicalJSON accepts (encoding/json's
// own limit), so hostile input cannot exhaust the stack.
const maxJSONDepth = 10000

// canonicalJSON re-encodes JSON the way V8's JSON.stringify would print it
// after JSON.parse: compact, numbers as float64 in ECMAScript format,
// strings with only the escapes JSON requires, key order kept (duplicate
// keys too).
//
// It is a single pass over the bytes: strings without escapes and with
// valid UTF-8, and integers of up to 15 digits, are copied as they are;
// only the rest is decoded and re-encoded (as encoding/json would).
func canonicalJSON(raw []byte) (json.RawMessage, error) {
	c := canonicalizer{in: raw, out: make([]byte, 0, len(raw))}
	c.skipSpace()
	if err := c.value(0); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	c.skipSpace()
	if c.pos != len(c.in) {
		return nil, errors.New("invalid JSON: trailing data")
	}
	return c.out, nil
}

type canonicalizer struct {
	in  []byte
	pos int
	out []byte
}

func (c *canonicalizer) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", c.pos, fmt.Sprintf(format, args...))
}

// value copies one value starting at c.pos (no leading space).
func (c *canonicalizer) value(depth int) error {
	if c.pos >= len(c.in) {
		return c.errorf("unexpected end of input")
	}
	switch ch := c.in[c.pos]; {
	case ch == '{' || ch == '[':
		if depth >= maxJSONDepth {
			return c.errorf("nesting deeper than %d", maxJSONDepth)
		}
		return c.container(depth)
	case ch == '"':
		return c.str()
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	default:
		return c.errorf("unexpected character %q", ch)
	}
}

func (c *canonicalizer) container(depth int) error {
	open := c.in[c.pos]
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	c.out = append(c.out, open)
	c.pos++
	c.skipSpace()
	if c.pos < len(c.in) && c.in[c.pos] == closing {
		c.pos++
		c.out = append(c.out, closing)
		return nil
	}
	for {
		if open == '{' {
			if c.pos >= len(c.in) || c.in[c.pos] != '"' {
				return c.errorf("object key expected")
			}
			if err := c.str(); err != nil {
				return err
			}
			c.skipSpace()
			if c.pos >= len(c.in) || c.in[c.pos] != ':' {
				return c.errorf("':' expected after an object key")
			}
			c.pos++
			c.out = append(c.out, ':')
			c.skipSpace()
		}
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) {
			return c.errorf("unexpected end of input")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
			c.skipSpace()
		case closing:
			c.pos++
			c.out = append(c.out, closing)
			return nil
		default:
			return c.errorf("',' or %q expected", closing)
		}
	}
}

// str copies a string; one with escapes or invalid UTF-8 is decoded and
// re-quoted like JSON.stringify.
func (c *canonicalizer) str() error {
	start := c.pos
	i := start + 1
	plain := true
	ascii := true
	for ; i < len(c.in); i++ {
		ch := c.in[i]
		if ch == '"' {
			break
		}
		switch {
		case ch == '\\':
			plain = false
			i++ // the escaped byte cannot end the string
		case ch < 0x20:
			return c.errorf("control character in a string")
		case ch >= utf8.RuneSelf:
			ascii = false
		}
	}
	if i >= len(c.in) {
		return c.errorf("unterminated string")
	}
	end := i + 1
	c.pos = end
	lit := c.in[start:end]
	if plain && (ascii || utf8.Valid(lit)) {
		c.out = append(c.out, lit...)
		return nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return c.errorf("bad string: %v", err)
	}
	c.out = jssyntax.AppendString(c.out, s)
	return nil
}

// number copies a number as ECMAScript prints the float64 it denotes.
func (c *canonicalizer) number() error {
	start := c.pos
	i := start
	if c.in[i] == '-' {
		i++
	}
	intStart := i
	switch {
	case i < len(c.in) && c.in[i] == '0':
		i++
	case i < len(c.in) && c.in[i] >= '1' && c.in[i] <= '9':
		for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
			i++
		}
	default:
		return c.errorf("bad number")
	}
	intDigits := i - intStart
	integer := true
	fracStart, fracEnd := i, i // the fraction's digits, if any
	if i < len(c.in) && c.in[i] == '.' {
		integer = false
		i++
		d := i
		for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
			i++
		}
		if i == d {
			return c.errorf("bad number")
		}
		fracStart, fracEnd = d, i
	}
	exponent := false
	if i < len(c.in) && (c.in[i] == 'e' || c.in[i] == 'E') {
		integer = false
		exponent = true
		i++
		if i < len(c.in) && (c.in[i] == '+' || c.in[i] == '-') {
			i++
		}
		d := i
		for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
			i++
		}
		if i == d {
			return c.errorf("bad number")
		}
	}
	c.pos = i
	lit := c.in[start:i]
	if integer && intDigits <= 15 {
		// Exact as a float64 and printed with the same digits.
		c.out = append(c.out, lit...)
		return nil
	}
	if !exponent && plainDecimal(c.in[intStart:intStart+intDigits], c.in[fracStart:fracEnd]) {
		c.out = append(c.out, lit...)
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return c.errorf("bad number %s: %v", lit, err)
	}
	c.out = appendFloat(c.out, f)
	return nil
}

// plainDecimal reports whether the number with integer digits whole and
// fraction digits frac (no exponent) prints, as ECMAScript prints the
// float64 it denotes, exactly as written: at most 15 significant digits
// (so no shorter decimal denotes the same float64, and the literal is the
// shortest that does), no trailing zero in the fraction, and at least 1e-6
// (smaller values print in exponent form; whole has at most 15 digits, so
// the value is below 1e21).
func plainDecimal(whole, frac []byte) bool {
	if len(frac) == 0 || frac[len(frac)-1] == '0' {
		return false
	}
	significant := len(whole) + len(frac)
	if len(whole) == 1 && whole[0] == '0' {
		zeros := 0
		for zeros < len(frac) && frac[zeros] == '0' {
			zeros++
		}
		if zeros > 5 { // below 1e-6
			return false
		}
		significant = len(frac) - zeros
	}
	return significant <= 15
}

// appendFloat formats f as encoding/json does (and JSON.stringify, for
// finite values): shortest round-trip digits, exponent form only below
// 1e-6 or from 1e21 on.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func (c *canonicalizer) literal(word string) error {
	if len(c.in)-c.pos < len(word) || string(c.in[c.pos:c.pos+len(word)]) != word {
		return c.errorf("bad literal")
	}
	c.pos += len(word)
	c.out = append(c.out, word...)
	return nil
}
