package fastpath

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	// tokInvalid is produced for anything outside the tiny JavaScript subset
	// understood here (template literals, regular expressions, operators,
	// non-ASCII identifiers, unterminated comments or strings, ...). It never
	// matches anything in the grammar, so it always leads to KindNone.
	tokInvalid tokKind = iota
	tokEOF
	tokIdent  // ASCII IdentifierName; text holds it
	tokString // string literal; str holds the decoded value
	tokNumber // numeric literal; num holds the value
	tokPunct  // one of { } [ ] ( ) , : ; = - . ; text holds it
)

// token is one lexical token.
type token struct {
	kind tokKind
	// nl reports whether a line terminator (possibly inside a comment)
	// precedes the token. It matters for automatic semicolon insertion.
	nl   bool
	text string
	str  string
	num  float64
}

// is reports whether t is the punctuator or identifier s.
func (t token) is(s string) bool {
	return (t.kind == tokPunct || t.kind == tokIdent) && t.text == s
}

// lexer is a small JavaScript lexer covering whitespace, comments, ASCII
// identifiers, string and numeric literals and a handful of punctuators.
// It runs in time linear in the input and never backtracks.
type lexer struct {
	src    string
	pos    int
	bad    bool
	peeked bool
	ahead  token
}

// next consumes and returns the next token.
func (l *lexer) next() token {
	if l.peeked {
		l.peeked = false
		return l.ahead
	}
	return l.scan()
}

// peek returns the next token without consuming it.
func (l *lexer) peek() token {
	if !l.peeked {
		l.ahead = l.scan()
		l.peeked = true
	}
	return l.ahead
}

// fail makes the lexer return tokInvalid from now on.
func (l *lexer) fail() token {
	l.bad = true
	l.pos = len(l.src)
	return token{kind: tokInvalid}
}

func (l *lexer) scan() token {
	if l.bad {
		return token{kind: tokInvalid}
	}
	nl, ok := l.skipSpace()
	if !ok {
		return l.fail()
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, nl: nl}
	}
	var t token
	c := l.src[l.pos]
	switch {
	case isIdentStart(c):
		start := l.pos
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		if l.pos < len(l.src) && l.src[l.pos] == '\\' {
			return l.fail() // unicode escape inside an identifier
		}
		t = token{kind: tokIdent, text: l.src[start:l.pos]}
	case isDigit(c) || (c == '.' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
		f, ok := l.scanNumber()
		if !ok {
			return l.fail()
		}
		t = token{kind: tokNumber, num: f}
	case c == '"' || c == '\'':
		s, ok := l.scanString(c)
		if !ok {
			return l.fail()
		}
		t = token{kind: tokString, str: s}
	case strings.IndexByte("{}[](),:;=-.", c) >= 0:
		t = token{kind: tokPunct, text: l.src[l.pos : l.pos+1]}
		l.pos++
	default:
		return l.fail()
	}
	t.nl = nl
	return t
}

// skipSpace skips JavaScript whitespace, line terminators and comments.
// It reports whether a line terminator was seen and false for an
// unterminated block comment.
func (l *lexer) skipSpace() (nl, ok bool) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			l.pos++
		case c == '\n' || c == '\r':
			nl = true
			l.pos++
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '/':
			// Single-line comment: runs up to, not including, the next
			// line terminator.
			l.pos += 2
		line:
			for l.pos < len(l.src) {
				switch l.src[l.pos] {
				case '\n', '\r':
					break line
				case 0xE2:
					if isLSPS(l.src[l.pos:]) {
						break line
					}
				}
				l.pos++
			}
		case c == '/' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '*':
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return nl, false
			}
			if hasLineTerminator(l.src[l.pos+2 : l.pos+2+end]) {
				nl = true
			}
			l.pos += 2 + end + 2
		case c < utf8.RuneSelf:
			return nl, true
		default:
			r, size := utf8.DecodeRuneInString(l.src[l.pos:])
			switch {
			case r == '\u2028' || r == '\u2029':
				nl = true
			case isUnicodeSpace(r):
			default:
				return nl, true
			}
			l.pos += size
		}
	}
	return nl, true
}

// scanNumber scans a NumericLiteral: decimal (with fraction and exponent),
// 0x/0o/0b integers. Legacy octal (017), numeric separators (1_000) and
// BigInt (1n) are rejected, as is a literal directly followed by an
// identifier character or digit, and any value that is not finite.
func (l *lexer) scanNumber() (float64, bool) {
	s := l.src
	i := l.pos
	if s[i] == '0' && i+1 < len(s) {
		base := 0
		switch s[i+1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			j := i + 2
			for j < len(s) && digitVal(s[j]) < base {
				j++
			}
			if j == i+2 || !l.numberEnds(j) {
				return 0, false
			}
			l.pos = j
			digits := s[i+2 : j]
			var f float64
			if base == 16 {
				var err error
				f, err = strconv.ParseFloat("0x"+digits+"p0", 64)
				if err != nil {
					return 0, false
				}
			} else {
				n, ok := new(big.Int).SetString(digits, base)
				if !ok {
					return 0, false
				}
				f, _ = new(big.Float).SetInt(n).Float64()
			}
			if math.IsInf(f, 0) {
				return 0, false
			}
			return f, true
		}
	}
	j := i
	switch {
	case s[j] == '0':
		j++
		if j < len(s) && isDigit(s[j]) {
			return 0, false // legacy octal or "noctal" literal
		}
	default:
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == k {
			return 0, false
		}
	}
	if !l.numberEnds(j) {
		return 0, false
	}
	text := s[i:j]
	l.pos = j
	f, err := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

// numberEnds reports whether a numeric literal may end at j: the next
// source character must not be an identifier character, a digit or a
// backslash (which would start an identifier escape).
func (l *lexer) numberEnds(j int) bool {
	return j >= len(l.src) || !(isIdentPart(l.src[j]) || l.src[j] == '\\')
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// scanString scans a string literal delimited by q and returns its decoded
// value. Supported escapes: \n \t \r \b \f \v \0 (not followed by a digit)
// \' \" \\ \/ \xHH \uXXXX \u{X...}. Surrogate pairs written as two escapes
// are combined; lone surrogates, octal escapes, line continuations, other
// identity escapes and raw line feeds or carriage returns are rejected.
func (l *lexer) scanString(q byte) (string, bool) {
	s := l.src
	i := l.pos + 1
	start := i
	// Fast path: no escapes.
	for i < len(s) {
		c := s[i]
		if c == q {
			l.pos = i + 1
			return s[start:i], true
		}
		if c == '\\' || c == '\n' || c == '\r' {
			break
		}
		i++
	}
	var b strings.Builder
	b.WriteString(s[start:i])
	var high rune // pending high surrogate from a \u escape
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			if high != 0 || c == '\n' || c == '\r' {
				return "", false
			}
			if c == q {
				l.pos = i + 1
				return b.String(), true
			}
			b.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		e := s[i]
		i++
		var unit rune = -1 // code unit or point from \x or \u
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0':
			if i < len(s) && isDigit(s[i]) {
				return "", false // octal escape
			}
			b.WriteByte(0)
		case '\'', '"', '\\', '/':
			b.WriteByte(e)
		case 'x':
			if i+2 > len(s) || digitVal(s[i]) >= 16 || digitVal(s[i+1]) >= 16 {
				return "", false
			}
			unit = rune(digitVal(s[i])<<4 | digitVal(s[i+1]))
			i += 2
		case 'u':
			if i < len(s) && s[i] == '{' {
				i++
				var v rune
				k := i
				for i < len(s) && digitVal(s[i]) < 16 {
					v = v<<4 | rune(digitVal(s[i]))
					if v > unicode.MaxRune {
						return "", false
					}
					i++
				}
				if i == k || i >= len(s) || s[i] != '}' {
					return "", false
				}
				i++
				unit = v
			} else {
				if i+4 > len(s) {
					return "", false
				}
				var v rune
				for k := 0; k < 4; k++ {
					d := digitVal(s[i+k])
					if d >= 16 {
						return "", false
					}
					v = v<<4 | rune(d)
				}
				i += 4
				unit = v
			}
		default:
			// Octal escapes, line continuations and identity escapes of
			// other characters: valid JavaScript in some modes, but rare;
			// leave them to V8.
			return "", false
		}
		if unit < 0 {
			if high != 0 {
				return "", false
			}
			continue
		}
		switch {
		case high != 0:
			if unit < 0xDC00 || unit > 0xDFFF {
				return "", false
			}
			b.WriteRune(utf16.DecodeRune(high, unit))
			high = 0
		case unit >= 0xD800 && unit <= 0xDBFF:
			high = unit
		case unit >= 0xDC00 && unit <= 0xDFFF:
			return "", false // lone low surrogate
		default:
			b.WriteRune(unit)
		}
	}
	return "", false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitVal returns the value of the hexadecimal digit c, or 16 if c is not
// one.
func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 16
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isUnicodeSpace reports whether the non-ASCII rune r is JavaScript
// WhiteSpace (NBSP, ZWNBSP or a Zs space separator).
func isUnicodeSpace(r rune) bool {
	return r == '\u00A0' || r == '\uFEFF' || unicode.Is(unicode.Zs, r)
}

// isLSPS reports whether s starts with U+2028 or U+2029.
func isLSPS(s string) bool {
	return strings.HasPrefix(s, "\u2028") || strings.HasPrefix(s, "\u2029")
}

func hasLineTerminator(s string) bool {
	return strings.ContainsAny(s, "\n\r\u2028\u2029")
}

// isJSSpace reports whether r is JavaScript WhiteSpace or LineTerminator.
func isJSSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\v', '\f', '\n', '\r', '\u2028', '\u2029':
		return true
	}
	return r >= utf8.RuneSelf && isUnicodeSpace(r)
}
