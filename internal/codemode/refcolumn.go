package codemode

import (
	"strings"
	"unicode/utf16"

	"github.com/isogate/isogate/internal/jssyntax"
)

// referenceAt moves the position of a "ReferenceError: NAME is not
// defined" to NAME itself. V8 locates such an error at the last source
// position its bytecode recorded before the failing global load, which is
// often the start of the statement (`return await everythin.get_sum(…)`
// reads column 1): the reference is the first identifier NAME at or after
// that position that is not a property name (after "." or "?."). Any other
// message, or no such identifier, keeps line and column as they are.
func (p *program) referenceAt(message string, line, column int) (int, int) {
	name, ok := strings.CutPrefix(message, "ReferenceError: ")
	if !ok {
		return line, column
	}
	if name, ok = strings.CutSuffix(name, " is not defined"); !ok || name == "" || p == nil {
		return line, column
	}
	code := p.original
	from, ok := offsetOf(code, line, column)
	if !ok {
		return line, column
	}
	var s jssyntax.Scanner
	s.Init(code)
	var prev jssyntax.Token
	for t := s.Next(); t.Kind != jssyntax.EOF && t.Kind != jssyntax.Invalid; prev, t = t, s.Next() {
		if t.Start < from || t.Kind != jssyntax.Ident || t.Text != name {
			continue
		}
		if prev.Kind == jssyntax.Punct && (prev.Text == "." || prev.Text == "?.") {
			continue
		}
		if t.Start == 0 {
			return 1, 1
		}
		return lineColumn(code, t.Start)
	}
	return line, column
}

// offsetOf is the byte offset in code of a 1-based line and column (in
// UTF-16 code units, as V8 counts; the inverse of lineColumn), or ok=false
// when code has no such position.
func offsetOf(code string, line, column int) (int, bool) {
	if line < 1 || column < 1 {
		return 0, false
	}
	start := 0
	for range line - 1 {
		i := strings.IndexByte(code[start:], '\n')
		if i < 0 {
			return 0, false
		}
		start += i + 1
	}
	units := column - 1
	for i, r := range code[start:] {
		if units <= 0 || r == '\n' {
			return start + i, units <= 0
		}
		units -= utf16.RuneLen(r)
	}
	return len(code), units <= 0
}
