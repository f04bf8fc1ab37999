package jssyntax

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TokenKind is the kind of a Token.
type TokenKind uint8

const (
	// EOF ends the token stream; Next keeps returning it.
	EOF TokenKind = iota
	// Invalid is an unterminated string, template, regular expression or
	// block comment, or a line break inside a string or regular
	// expression. Next keeps returning it.
	Invalid
	// Ident is an IdentifierName, keywords included: ASCII, Unicode
	// (ID_Start, ID_Continue) and \u escapes.
	Ident
	// Number is a numeric literal. Its text runs on over the identifier
	// characters and backslashes that directly follow (1n, 1_000, and 1a,
	// which is no number), so a consumer that takes fewer forms rejects
	// the whole token.
	Number
	// String is a string literal, quotes included. Escapes are not
	// decoded, and a line continuation is part of the literal.
	String
	// Template is a template literal without substitutions: `…`.
	Template
	// TemplateHead is the start of a template literal up to its first
	// substitution: `…${.
	TemplateHead
	// TemplateMiddle is the text between two substitutions: }…${.
	TemplateMiddle
	// TemplateTail is the rest of a template literal after its last
	// substitution: }…`.
	TemplateTail
	// RegExp is a regular expression literal, flags included.
	RegExp
	// Punct is a punctuator (longest match: "===", "?.", "=>", "..."), or
	// any other single character that starts no token ('#', '@', '\\', a
	// non-ASCII symbol).
	Punct
)

var kindNames = [...]string{"EOF", "Invalid", "Ident", "Number", "String", "Template",
	"TemplateHead", "TemplateMiddle", "TemplateTail", "RegExp", "Punct"}

// String returns the name of k, e.g. "TemplateHead".
func (k TokenKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "TokenKind(" + strconv.Itoa(int(k)) + ")"
}

// Token is one lexical token of JavaScript source.
type Token struct {
	Kind TokenKind
	// NL reports whether a line terminator (possibly inside a comment)
	// precedes the token, which matters for automatic semicolon insertion.
	NL bool
	// Start and End are the byte offsets of the token in the source.
	Start, End int
	// Text is the source of the token, src[Start:End].
	Text string
}

// Scanner splits JavaScript (or TypeScript) source into tokens, skipping
// whitespace and comments. It runs in time linear in the source and never
// backtracks.
//
// Whether a '/' starts a regular expression or is a division depends on
// the grammar; the scanner decides from the previous token: a regular
// expression at the start, after a punctuator other than ) ] }, after the
// "${" of a template, and after the keywords that take an operand
// (return, typeof, in, of, new, delete, void, throw, case, do, else,
// await, yield, instanceof); a division after anything else.
//
// A '}' resumes the template literal whose substitution it closes; the
// scanner counts braces for that and matches no other brackets.
//
// The zero Scanner scans empty source; Init starts it on another.
type Scanner struct {
	src    string
	pos    int
	failed bool
	// prevKind and prevText are the previous token, for regular
	// expressions; prevKind is EOF before the first token.
	prevKind TokenKind
	prevText string
	// braces counts the '{' open since the innermost template substitution
	// (or the start); subst saves the outer counts, one per open "${".
	braces int
	subst  []int
}

// Init makes s scan src from its start.
func (s *Scanner) Init(src string) {
	*s = Scanner{src: src}
}

// Next consumes and returns the next token.
func (s *Scanner) Next() Token {
	if s.failed {
		return Token{Kind: Invalid, Start: len(s.src), End: len(s.src)}
	}
	nl, ok := s.skipSpace()
	start := s.pos
	if !ok {
		return s.fail()
	}
	if start >= len(s.src) {
		return Token{Kind: EOF, NL: nl, Start: start, End: start}
	}
	kind := s.scan()
	if kind == Invalid {
		return s.fail()
	}
	t := Token{Kind: kind, NL: nl, Start: start, End: s.pos, Text: s.src[start:s.pos]}
	s.prevKind, s.prevText = kind, t.Text
	return t
}

// fail makes Next return Invalid from now on.
func (s *Scanner) fail() Token {
	s.failed = true
	s.pos = len(s.src)
	return Token{Kind: Invalid, Start: len(s.src), End: len(s.src)}
}

// scan scans the token at s.pos, which is not space, and returns its kind.
func (s *Scanner) scan() TokenKind {
	c := s.src[s.pos]
	switch c {
	case '(', ')', '[', ']', ';', ',', ':', '~':
		s.pos++
		return Punct
	case '{':
		s.braces++
		s.pos++
		return Punct
	case '}':
		s.pos++
		switch {
		case s.braces > 0:
			s.braces--
		case len(s.subst) > 0:
			s.braces = s.subst[len(s.subst)-1]
			s.subst = s.subst[:len(s.subst)-1]
			return s.scanTemplate(TemplateTail, TemplateMiddle)
		}
		return Punct
	case '"', '\'':
		return s.scanString(c)
	case '`':
		s.pos++
		return s.scanTemplate(Template, TemplateHead)
	case '/':
		if s.regExpAllowed() {
			return s.scanRegExp()
		}
	}
	switch {
	case isASCIIIdentStart(c) || c == '\\' && s.at(1) == 'u':
		s.scanIdent()
		return Ident
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRuneInString(s.src[s.pos:])
		if IsIDStart(r) {
			s.scanIdent()
			return Ident
		}
		s.pos += size
		return Punct
	case isDigit(c) || c == '.' && isDigit(s.at(1)):
		s.scanNumber()
		return Number
	}
	s.pos += punctLen(s.src[s.pos:])
	return Punct
}

// at returns the byte k bytes after the current position, or 0 past the
// end.
func (s *Scanner) at(k int) byte {
	if s.pos+k < len(s.src) {
		return s.src[s.pos+k]
	}
	return 0
}

// skipSpace skips whitespace, line terminators and comments. It reports
// whether a line terminator was seen, and false for an unterminated block
// comment.
func (s *Scanner) skipSpace() (nl, ok bool) {
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			s.pos++
		case c == '\n' || c == '\r':
			nl = true
			s.pos++
		case c == '/' && s.at(1) == '/':
			// A line comment runs up to, not including, the next line
			// terminator.
			s.pos += 2
		line:
			for s.pos < len(s.src) {
				switch s.src[s.pos] {
				case '\n', '\r':
					break line
				case 0xE2:
					if isLSPS(s.src[s.pos:]) {
						break line
					}
				}
				s.pos++
			}
		case c == '/' && s.at(1) == '*':
			end := strings.Index(s.src[s.pos+2:], "*/")
			if end < 0 {
				return nl, false
			}
			if hasLineTerminator(s.src[s.pos+2 : s.pos+2+end]) {
				nl = true
			}
			s.pos += 2 + end + 2
		case c < utf8.RuneSelf:
			return nl, true
		default:
			r, size := utf8.DecodeRuneInString(s.src[s.pos:])
			switch {
			case r == '\u2028' || r == '\u2029':
				nl = true
			case isUnicodeSpace(r):
			default:
				return nl, true
			}
			s.pos += size
		}
	}
	return nl, true
}

// scanIdent scans an IdentifierName.
func (s *Scanner) scanIdent() {
	src, i := s.src, s.pos
	for i < len(src) && asciiIdentPart[src[i]] {
		i++
	}
	s.pos = i
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case asciiIdentPart[c]:
			s.pos++
		case c == '\\':
			if s.at(1) != 'u' {
				return
			}
			s.pos += 2
			if s.at(0) == '{' {
				j := s.pos + 1
				for j < len(s.src) && isHexDigit(s.src[j]) {
					j++
				}
				if j < len(s.src) && s.src[j] == '}' {
					s.pos = j + 1
				}
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s.src[s.pos:])
			if !IsIDPart(r) {
				return
			}
			s.pos += size
		default:
			return
		}
	}
}

// scanNumber scans a numeric literal and the identifier characters and
// backslashes that directly follow it.
func (s *Scanner) scanNumber() {
	src := s.src
	i := s.pos
	if src[i] == '0' && strings.IndexByte("xXoObB", s.at(1)) >= 0 {
		i += 2 // the digits are taken in with the identifier characters
	} else {
		for i < len(src) && (isDigit(src[i]) || src[i] == '_') {
			i++
		}
		if i < len(src) && src[i] == '.' {
			i++
			for i < len(src) && (isDigit(src[i]) || src[i] == '_') {
				i++
			}
		}
		if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
			j := i + 1
			if j < len(src) && (src[j] == '+' || src[j] == '-') {
				j++
			}
			if j < len(src) && isDigit(src[j]) {
				i = j
				for i < len(src) && (isDigit(src[i]) || src[i] == '_') {
					i++
				}
			}
		}
	}
	for i < len(src) && (isASCIIIdentPart(src[i]) || src[i] == '\\') {
		i++
	}
	s.pos = i
}

// scanString scans a string literal delimited by q.
func (s *Scanner) scanString(q byte) TokenKind {
	src := s.src
	for i := s.pos + 1; i < len(src); i++ {
		switch src[i] {
		case q:
			s.pos = i + 1
			return String
		case '\\':
			i++ // the escaped character (or the CR of a CRLF continuation)
			if i+1 < len(src) && src[i] == '\r' && src[i+1] == '\n' {
				i++
			}
		case '\n', '\r':
			return Invalid
		}
	}
	return Invalid
}

// scanTemplate scans template characters after a '`' or a substitution's
// '}' up to the closing '`' (returning end) or the next "${" (returning
// open).
func (s *Scanner) scanTemplate(end, open TokenKind) TokenKind {
	src := s.src
	for i := s.pos; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '`':
			s.pos = i + 1
			return end
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				s.pos = i + 2
				s.subst = append(s.subst, s.braces)
				s.braces = 0
				return open
			}
		}
	}
	return Invalid
}

// scanRegExp scans a regular expression literal and its flags.
func (s *Scanner) scanRegExp() TokenKind {
	src := s.src
	inClass := false
	for i := s.pos + 1; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
			if i < len(src) && (src[i] == '\n' || src[i] == '\r' || isLSPS(src[i:])) {
				return Invalid
			}
		case c == '\n' || c == '\r' || c == 0xE2 && isLSPS(src[i:]):
			return Invalid
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '/' && !inClass:
			i++
			for i < len(src) && isASCIIIdentPart(src[i]) {
				i++
			}
			s.pos = i
			return RegExp
		}
	}
	return Invalid
}

// regExpAllowed reports whether a '/' after the previous token starts a
// regular expression rather than a division.
func (s *Scanner) regExpAllowed() bool {
	switch s.prevKind {
	case EOF, TemplateHead, TemplateMiddle:
		return true
	case Punct:
		switch s.prevText {
		case ")", "]", "}":
			return false
		}
		return true
	case Ident:
		switch s.prevText {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
			"else", "await", "yield":
			return true
		}
	}
	return false
}

// puncts lists the punctuators of more than one character by first
// character, longest first.
var puncts = [128][]string{
	'.': {"..."},
	'?': {"??=", "??", "?."},
	'=': {"===", "==", "=>"},
	'!': {"!==", "!="},
	'<': {"<<=", "<<", "<="},
	'>': {">>>=", ">>>", ">>=", ">>", ">="},
	'*': {"**=", "**", "*="},
	'&': {"&&=", "&&", "&="},
	'|': {"||=", "||", "|="},
	'+': {"++", "+="},
	'-': {"--", "-="},
	'/': {"/="},
	'%': {"%="},
	'^': {"^="},
}

// punctLen returns the length of the punctuator at the start of s (1 for a
// character that is none).
func punctLen(s string) int {
	c := s[0]
	if c >= utf8.RuneSelf {
		_, size := utf8.DecodeRuneInString(s)
		return size
	}
	for _, p := range puncts[c] {
		if strings.HasPrefix(s, p) {
			if p == "?." && len(s) > 2 && isDigit(s[2]) {
				continue // a ? b ?.5 : c is a conditional
			}
			return len(p)
		}
	}
	return 1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isASCIIIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isASCIIIdentPart(c byte) bool { return asciiIdentPart[c] }

// asciiIdentPart holds the ASCII characters that may continue an
// identifier: letters, digits, '_' and '$'.
var asciiIdentPart = func() (t [256]bool) {
	for c := range 128 {
		t[c] = isASCIIIdentStart(byte(c)) || isDigit(byte(c))
	}
	return t
}()

// IsIDStart reports whether r may start a JavaScript identifier
// (ID_Start, '$' or '_').
func IsIDStart(r rune) bool {
	return r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

// IsIDPart reports whether r may continue a JavaScript identifier
// (ID_Continue, '$', ZWNJ, ZWJ).
func IsIDPart(r rune) bool {
	return IsIDStart(r) || unicode.IsDigit(r) ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc) ||
		r == '\u200c' || r == '\u200d'
}

// IsSpace reports whether r is JavaScript WhiteSpace or a LineTerminator.
func IsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\v', '\f', '\n', '\r', '\u2028', '\u2029':
		return true
	}
	return r >= utf8.RuneSelf && isUnicodeSpace(r)
}

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
