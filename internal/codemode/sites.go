package codemode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/jssyntax"
)

// maxNamedSites bounds the call sites a refusal names: more, and none is
// named (the program calls the tool in too many places to tell).
const maxNamedSites = 3

// callSites finds where code calls t directly (b.t(…), b["t"](…), by the
// backend's and the tool's original or sanitized names) and renders each
// as V8 names a call's position: the tool's name in b.t(…), the "(" in
// b["t"](…). A call through an alias (const f = b.t) is not found. It is
// how a tier-3 call refused on the host (INVALID_ARGUMENTS) gets the line
// and column of the call, at no cost to calls that pass: the refusal's
// error is made on the host's side, where the program's stack is gone.
func callSites(code string, t *Tool) []string {
	isBackend := func(s string) bool { return s == t.Backend || (t.BackendIdent != "" && s == t.BackendIdent) }
	isTool := func(s string) bool { return s == t.Name || s == t.NameIdent }
	var sc jssyntax.Scanner
	sc.Init(code)
	var toks [5]jssyntax.Token // the last five tokens, newest last
	var sites []string
	for {
		tok := sc.Next()
		if tok.Kind == jssyntax.EOF || tok.Kind == jssyntax.Invalid {
			break
		}
		copy(toks[:], toks[1:])
		toks[4] = tok
		if !punct(tok, "(") {
			continue
		}
		at := -1
		switch {
		case toks[1].Kind == jssyntax.Ident && isBackend(toks[1].Text) && punct(toks[2], ".") &&
			toks[3].Kind == jssyntax.Ident && isTool(toks[3].Text):
			at = toks[3].Start
		case toks[0].Kind == jssyntax.Ident && isBackend(toks[0].Text) && punct(toks[1], "[") &&
			toks[2].Kind == jssyntax.String && isTool(plainString(toks[2].Text)) && punct(toks[3], "]"):
			at = tok.Start
		}
		if at >= 0 {
			if len(sites) == maxNamedSites {
				return nil
			}
			line, col := lineColumn(code, at)
			sites = append(sites, fmt.Sprintf("line %d, column %d", line, col))
		}
	}
	return sites
}

// sitesText is the position callSites found, as describeError appends
// one: " (line 2, column 28)", or the places the call may be.
func sitesText(sites []string) string {
	switch len(sites) {
	case 0:
		return ""
	case 1:
		return " (" + sites[0] + ")"
	}
	return " (" + strings.Join(sites, " or ") + ")"
}

func punct(t jssyntax.Token, s string) bool { return t.Kind == jssyntax.Punct && t.Text == s }

// plainString is a string literal's value when it has no escapes, else "".
func plainString(lit string) string {
	if len(lit) < 2 || strings.ContainsRune(lit, '\\') {
		return ""
	}
	if lit[0] == '"' {
		s, err := strconv.Unquote(lit)
		if err != nil {
			return ""
		}
		return s
	}
	return lit[1 : len(lit)-1]
}
