package fastpath

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"

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

// litParser parses a JavaScript literal (a superset of JSON) from a lexer.
type litParser struct {
	lx    *lexer
	depth int
	// json is set when parsing a document already validated as JSON: a
	// "__proto__" key is then an ordinary key, as with JSON.parse. In a
	// JavaScript object literal it sets the prototype instead, so it is
	// rejected.
	json bool
}

// parseValue parses a value whose first token t has already been consumed.
func (p *litParser) parseValue(t token) (value, bool) {
	switch t.kind {
	case tokString:
		return value{kind: valString, str: t.str}, true
	case tokNumber:
		return value{kind: valNumber, num: t.num}, true
	case tokIdent:
		switch t.text {
		case "true":
			return value{kind: valTrue}, true
		case "false":
			return value{kind: valFalse}, true
		case "null":
			return value{kind: valNull}, true
		}
	case tokPunct:
		switch t.text {
		case "{":
			return p.parseObject()
		case "[":
			return p.parseArray()
		case "-":
			n := p.lx.next()
			if n.kind != tokNumber {
				return value{}, false
			}
			return value{kind: valNumber, num: -n.num}, true
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
	t := p.lx.next()
	for !t.is("}") {
		var key string
		switch t.kind {
		case tokIdent:
			key = t.text
		case tokString:
			key = t.str
		case tokNumber:
			key = formatNumber(t.num)
		default:
			return value{}, false
		}
		if key == "__proto__" && !p.json {
			return value{}, false
		}
		if !p.lx.next().is(":") {
			return value{}, false
		}
		v, ok := p.parseValue(p.lx.next())
		if !ok {
			return value{}, false
		}
		obj.set(key, v)
		t = p.lx.next()
		switch {
		case t.is(","):
			t = p.lx.next()
		case t.is("}"):
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
	t := p.lx.next()
	for !t.is("]") {
		v, ok := p.parseValue(t)
		if !ok {
			return value{}, false
		}
		arr.kids = append(arr.kids, member{val: v})
		t = p.lx.next()
		switch {
		case t.is(","):
			t = p.lx.next()
		case t.is("]"):
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
