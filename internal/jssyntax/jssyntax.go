// Package jssyntax holds the facts about JavaScript syntax that the
// catalogue and code mode share: which names are reserved, which
// characters make identifiers and whitespace, how JSON.stringify quotes a
// string, and the one tokenizer (Scanner) that code mode's fast path and
// its program-shape analysis both read source with.
package jssyntax

// reserved are names that cannot be variable names in strict-mode async
// code: keywords, future and strict-mode reserved words, literals, await,
// yield, let, eval and arguments.
var reserved = map[string]bool{
	"await": true, "break": true, "case": true, "catch": true, "class": true,
	"const": true, "continue": true, "debugger": true, "default": true,
	"delete": true, "do": true, "else": true, "enum": true, "export": true,
	"extends": true, "false": true, "finally": true, "for": true,
	"function": true, "if": true, "import": true, "in": true,
	"instanceof": true, "new": true, "null": true, "return": true,
	"super": true, "switch": true, "this": true, "throw": true, "true": true,
	"try": true, "typeof": true, "var": true, "void": true, "while": true,
	"with": true, "yield": true, "let": true, "static": true,
	"implements": true, "interface": true, "package": true, "private": true,
	"protected": true, "public": true, "eval": true, "arguments": true,
}

// IsReserved reports whether name cannot be bound as a variable in
// strict-mode async code.
func IsReserved(name string) bool { return reserved[name] }

// AppendString appends s quoted as JSON.stringify quotes strings: only '"',
// '\\' and control characters below U+0020 are escaped, with the short
// forms \b \f \n \r \t where they exist and \u00XX otherwise.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// StringLen is len(AppendString(nil, s)) without allocating.
func StringLen(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}
