package fastpath

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/isogate/isogate/internal/jssyntax"
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

// lexer reads the tokens of jssyntax.Scanner and keeps those of the tiny
// subset understood here, decoding string and numeric literals; any other
// token is tokInvalid, and so is everything after it.
type lexer struct {
	src string
	sc  jssyntax.Scanner
	bad bool
}

// newLexer returns a lexer reading src.
func newLexer(src string) lexer {
	l := lexer{src: src}
	l.sc.Init(src)
	return l
}

// fail makes the lexer return tokInvalid from now on.
func (l *lexer) fail() token {
	l.bad = true
	return token{kind: tokInvalid}
}

// next consumes and returns the next token.
func (l *lexer) next() token {
	if l.bad {
		return token{kind: tokInvalid}
	}
	jt := l.sc.Next()
	var t token
	switch jt.Kind {
	case jssyntax.EOF:
		t = token{kind: tokEOF}
	case jssyntax.Ident:
		for i := 0; i < len(jt.Text); i++ {
			if c := jt.Text[i]; c >= utf8.RuneSelf || c == '\\' {
				return l.fail() // non-ASCII, or a unicode escape
			}
		}
		t = token{kind: tokIdent, text: jt.Text}
	case jssyntax.Number:
		f, ok := parseNumber(jt.Text)
		if !ok {
			return l.fail()
		}
		t = token{kind: tokNumber, num: f}
	case jssyntax.String:
		s, ok := decodeString(jt.Text[1 : len(jt.Text)-1])
		if !ok {
			return l.fail()
		}
		t = token{kind: tokString, str: s}
	case jssyntax.Punct:
		if len(jt.Text) != 1 || strings.IndexByte("{}[](),:;=-.", jt.Text[0]) < 0 {
			return l.fail()
		}
		t = token{kind: tokPunct, text: jt.Text}
	default:
		return l.fail()
	}
	t.nl = jt.NL
	return t
}

// parseNumber returns the value of the numeric literal text (a
// jssyntax.Number token): decimal (with fraction and exponent), 0x/0o/0b
// integers. Legacy octal (017), numeric separators (1_000) and BigInt (1n)
// are rejected, as is a literal directly followed by an identifier
// character or digit (which the token takes in), and any value that is not
// finite.
func parseNumber(s string) (float64, bool) {
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			digits := s[2:]
			for i := 0; i < len(digits); i++ {
				if digitVal(digits[i]) >= base {
					return 0, false
				}
			}
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
	j := 0
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
	if j != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// decodeString returns the value of a string literal from the text
// between its quotes (a jssyntax.String token without them, so it holds no
// unescaped quote or line break). Supported escapes: \n \t \r \b \f \v \0
// (not followed by a digit) \' \" \\ \/ \xHH \uXXXX \u{X...}. Surrogate
// pairs written as two escapes are combined; lone surrogates, octal
// escapes, line continuations and other identity escapes are rejected.
func decodeString(s string) (string, bool) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, true // no escapes
	}
	var b strings.Builder
	b.WriteString(s[:i])
	var high rune // pending high surrogate from a \u escape
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			if high != 0 {
				return "", false
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
	if high != 0 {
		return "", false
	}
	return b.String(), true
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
