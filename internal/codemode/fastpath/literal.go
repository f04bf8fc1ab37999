package fastpath

import (
	"bytes"
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/isogate/isogate/internal/jssyntax"
)

// maxDepth bounds the nesting of arrays and objects in a literal. Deeper
// literals are left to V8.
const maxDepth = 512

// valKind is the kind of a literal value.
type valKind uint8

const (
	valNull valKind = iota
	valTrue
	valFalse
	valNumber
	valString
	valArray
	valObject
)

// value is a parsed literal. It is stored inline in its parent to keep
// allocations to one slice per array or object.
type value struct {
	kind valKind
	dup  bool    // object had a repeated key
	num  float64 // valNumber
	str  string  // valString
	// kids holds array elements (key unused) or object members. Objects
	// keep their keys in order of first definition; a repeated key replaces
	// the value but keeps the position of its first definition, as in
	// JavaScript.
	kids []member
}

// member is an object property or an array element.
type member struct {
	key string
	val value
}

// objectBuilder accumulates object members, resolving repeated keys.
type objectBuilder struct {
	obj   value
	index map[string]int // built once the object has many keys
}

// set defines key in the object.
func (o *objectBuilder) set(key string, val value) {
	kids := o.obj.kids
	if o.index == nil && len(kids) >= 8 {
		o.index = make(map[string]int, 2*len(kids))
		for i, m := range kids {
			o.index[m.key] = i
		}
	}
	i := -1
	if o.index != nil {
		if j, ok := o.index[key]; ok {
			i = j
		} else {
			o.index[key] = len(kids)
		}
	} else {
		for j := range kids {
			if kids[j].key == key {
				i = j
				break
			}
		}
	}
	if i >= 0 {
		kids[i].val = val
		o.obj.dup = true
		return
	}
	o.obj.kids = append(kids, member{key: key, val: val})
}

// litParser parses a JavaScript literal (a superset of JSON) from the
// tokens of a jssyntax.Scanner.
type litParser struct {
	sc    *jssyntax.Scanner
	depth int
	// json is set when parsing a document already validated as JSON: a
	// "__proto__" key is then an ordinary key, as with JSON.parse. In a
	// JavaScript object literal it sets the prototype instead, so it is
	// rejected.
	json bool
}

// parseValue parses a value whose first token t has already been consumed.
func (p *litParser) parseValue(t jssyntax.Token) (value, bool) {
	switch t.Kind {
	case jssyntax.String:
		s, ok := stringValue(t)
		return value{kind: valString, str: s}, ok
	case jssyntax.Number:
		f, ok := numberValue(t)
		return value{kind: valNumber, num: f}, ok
	case jssyntax.Ident:
		switch t.Text {
		case "true":
			return value{kind: valTrue}, true
		case "false":
			return value{kind: valFalse}, true
		case "null":
			return value{kind: valNull}, true
		}
	case jssyntax.Punct:
		switch t.Text {
		case "{":
			return p.parseObject()
		case "[":
			return p.parseArray()
		case "-":
			f, ok := numberValue(p.sc.Next())
			return value{kind: valNumber, num: -f}, ok
		}
	}
	return value{}, false
}

// parseObject parses an object literal after its "{": properties of the
// form key: value, where key is an identifier name, a string or a number,
// separated by commas with an optional trailing comma.
func (p *litParser) parseObject() (value, bool) {
	if p.depth++; p.depth > maxDepth {
		return value{}, false
	}
	defer func() { p.depth-- }()
	obj := objectBuilder{obj: value{kind: valObject}}
	t := p.sc.Next()
	for !is(t, "}") {
		var key string
		var ok bool
		switch t.Kind {
		case jssyntax.Ident:
			key, ok = plainIdent(t)
		case jssyntax.String:
			key, ok = stringValue(t)
		case jssyntax.Number:
			var f float64
			f, ok = numberValue(t)
			key = formatNumber(f)
		}
		if !ok || key == "__proto__" && !p.json {
			return value{}, false
		}
		if !is(p.sc.Next(), ":") {
			return value{}, false
		}
		v, ok := p.parseValue(p.sc.Next())
		if !ok {
			return value{}, false
		}
		obj.set(key, v)
		t = p.sc.Next()
		switch {
		case is(t, ","):
			t = p.sc.Next()
		case is(t, "}"):
		default:
			return value{}, false
		}
	}
	return obj.obj, true
}

// parseArray parses an array literal after its "[". A trailing comma is
// allowed; holes ([1,,2]) are not.
func (p *litParser) parseArray() (value, bool) {
	if p.depth++; p.depth > maxDepth {
		return value{}, false
	}
	defer func() { p.depth-- }()
	arr := value{kind: valArray}
	t := p.sc.Next()
	for !is(t, "]") {
		v, ok := p.parseValue(t)
		if !ok {
			return value{}, false
		}
		arr.kids = append(arr.kids, member{val: v})
		t = p.sc.Next()
		switch {
		case is(t, ","):
			t = p.sc.Next()
		case is(t, "]"):
		default:
			return value{}, false
		}
	}
	return arr, true
}

// appendJSON appends v encoded as JSON.stringify would encode it: compact,
// object keys in JavaScript property order (array-index keys ascending,
// then the other keys in insertion order), numbers formatted like
// Number.prototype.toString.
func appendJSON(b []byte, v *value) []byte {
	switch v.kind {
	case valNull:
		return append(b, "null"...)
	case valTrue:
		return append(b, "true"...)
	case valFalse:
		return append(b, "false"...)
	case valNumber:
		return appendNumber(b, v.num)
	case valString:
		return jssyntax.AppendString(b, v.str)
	case valArray:
		b = append(b, '[')
		for i := range v.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, &v.kids[i].val)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	first := true
	emit := func(m *member) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jssyntax.AppendString(b, m.key)
		b = append(b, ':')
		b = appendJSON(b, &m.val)
	}
	// JavaScript own-property order: integer indices ascending, then
	// string keys in insertion order.
	var idx []int
	for i := range v.kids {
		if _, ok := arrayIndex(v.kids[i].key); ok {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		for i := range v.kids {
			emit(&v.kids[i])
		}
		return append(b, '}')
	}
	slices.SortFunc(idx, func(x, y int) int {
		a, _ := arrayIndex(v.kids[x].key)
		c, _ := arrayIndex(v.kids[y].key)
		return cmp.Compare(a, c)
	})
	for _, i := range idx {
		emit(&v.kids[i])
	}
	for i := range v.kids {
		if _, ok := arrayIndex(v.kids[i].key); !ok {
			emit(&v.kids[i])
		}
	}
	return append(b, '}')
}

// arrayIndex reports whether k is the canonical string of an array index
// (an integer in [0, 2^32-2]) and returns it.
func arrayIndex(k string) (int64, bool) {
	if k == "" || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(k); i++ {
		if !isDigit(k[i]) {
			return 0, false
		}
		n = n*10 + int64(k[i]-'0')
	}
	return n, n <= math.MaxUint32-1
}

// formatNumber formats a finite float64 as JavaScript's Number::toString
// does; see appendNumber.
func formatNumber(f float64) string {
	return string(appendNumber(nil, f))
}

// appendNumber appends a finite float64 formatted as JavaScript's
// Number::toString does (and hence JSON.stringify): shortest round-trip
// digits, plain notation for 1e-7 <= |f| < 1e21, exponent notation
// ("1e+21", "1.5e-7") otherwise, and "0" for negative zero.
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		// Integers below 2^53 are exact and need all their digits.
		return strconv.AppendInt(b, int64(f), 10)
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±XX
	p := bytes.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(string(e[p+1:]))
	var dbuf [24]byte
	digits := append(dbuf[:0], e[0])
	if p > 1 {
		digits = append(digits, e[2:p]...)
	}
	k, n := len(digits), exp+1 // f = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// numberValue returns the value of a jssyntax.Number token; see
// parseNumber.
func numberValue(t jssyntax.Token) (float64, bool) {
	if t.Kind != jssyntax.Number {
		return 0, false
	}
	return parseNumber(t.Text)
}

// stringValue returns the value of a jssyntax.String token; see
// decodeString.
func stringValue(t jssyntax.Token) (string, bool) {
	if t.Kind != jssyntax.String {
		return "", false
	}
	return decodeString(t.Text[1 : len(t.Text)-1])
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
