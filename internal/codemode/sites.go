package codemode

import (
	"encoding/json"
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
//
// Of several sites, those whose argument is an object literal with other
// keys than the refused arguments (args) are left out, unless none is left.
func callSites(code string, t *Tool, args json.RawMessage) []string {
	isBackend := func(s string) bool { return s == t.Backend || (t.BackendIdent != "" && s == t.BackendIdent) }
	isTool := func(s string) bool { return s == t.Name || s == t.NameIdent }
	var sc jssyntax.Scanner
	sc.Init(code)
	var toks [5]jssyntax.Token // the last five tokens, newest last
	var sites, fitting []string
	var given map[string]json.RawMessage
	if json.Unmarshal(args, &given) != nil {
		given = nil
	}
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
			line, col := lineColumn(code, at)
			site := fmt.Sprintf("line %d, column %d", line, col)
			sites = append(sites, site)
			if keys, known := literalKeys(code[tok.End:]); !known || given == nil || sameKeys(keys, given) {
				fitting = append(fitting, site)
			}
		}
	}
	if len(fitting) > 0 {
		sites = fitting
	}
	if len(sites) > maxNamedSites {
		return nil
	}
	return sites
}

// literalKeys reads the keys of the object literal code starts with (a
// call's argument), each with its value when that is one literal token (a
// string without escapes, a number, true, false, null; else nil); known is
// false when code does not start with one, or the literal has a property
// whose key the text does not say (a spread, a computed key, a method).
func literalKeys(code string) (keys map[string]*jssyntax.Token, known bool) {
	var sc jssyntax.Scanner
	sc.Init(code)
	if !punct(sc.Next(), "{") {
		return nil, false
	}
	keys = map[string]*jssyntax.Token{}
	depth := 1
	var prop []jssyntax.Token // the first tokens of the property being read, at depth 1
	n := 0                    // the property's tokens
	end := func() bool {      // ends a property: false when its key is unknown
		var value *jssyntax.Token
		if n == 3 {
			v := prop[2] // prop's array is reused for the next property
			value = &v
		}
		switch {
		case n == 0:
			return true
		case n == 1 && prop[0].Kind == jssyntax.Ident: // {a}
			keys[prop[0].Text] = nil
			return true
		case n >= 2 && punct(prop[1], ":"):
			switch prop[0].Kind {
			case jssyntax.Ident, jssyntax.Number:
				keys[prop[0].Text] = value
				return true
			case jssyntax.String:
				if k := plainString(prop[0].Text); k != "" {
					keys[k] = value
					return true
				}
			}
		}
		return false
	}
	for {
		tok := sc.Next()
		switch {
		case tok.Kind == jssyntax.EOF || tok.Kind == jssyntax.Invalid:
			return nil, false
		case depth == 1 && punct(tok, ","):
			if !end() {
				return nil, false
			}
			prop, n = prop[:0], 0
			continue
		case depth == 1 && punct(tok, "}"):
			if !end() {
				return nil, false
			}
			return keys, true
		case punct(tok, "{") || punct(tok, "[") || punct(tok, "(") || tok.Kind == jssyntax.TemplateHead:
			depth++
		case punct(tok, "}") || punct(tok, "]") || punct(tok, ")") || tok.Kind == jssyntax.TemplateTail:
			depth--
		}
		if n++; len(prop) < 3 {
			prop = append(prop, tok) // the key, ":" and a one-token value are enough
		}
	}
}

// sameKeys reports whether a literal's keys are exactly the keys of the
// arguments given, and its one-token literal values theirs.
func sameKeys(keys map[string]*jssyntax.Token, given map[string]json.RawMessage) bool {
	if len(keys) != len(given) {
		return false
	}
	for k, value := range keys {
		raw, ok := given[k]
		if !ok {
			return false
		}
		if value == nil {
			continue
		}
		var want any
		switch {
		case value.Kind == jssyntax.String:
			if plainString(value.Text) == "" && len(value.Text) > 2 {
				continue
			}
			want = plainString(value.Text)
		case value.Kind == jssyntax.Number:
			f, err := strconv.ParseFloat(value.Text, 64)
			if err != nil {
				continue
			}
			want = f
		case value.Kind == jssyntax.Ident && (value.Text == "true" || value.Text == "false"):
			want = value.Text == "true"
		case value.Kind == jssyntax.Ident && value.Text == "null":
			want = nil
		default:
			continue // a name, whose value the text does not say
		}
		var got any
		if json.Unmarshal(raw, &got) != nil || got != want {
			return false
		}
	}
	return true
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
