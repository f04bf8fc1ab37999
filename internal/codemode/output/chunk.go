package output

import (
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/resultstore"
)

// Summary tuning. These are deliberately not options: they shape how a
// summary reads, not how much of the output survives.
const (
	// dominantTenths: a container value is the "single big value" of an
	// object when its encoding is at least this many tenths of the object's.
	dominantTenths = 7
	// maxEnvelopeDepth bounds how deep mainArray looks for the array.
	maxEnvelopeDepth = 8
	// uniformShareTenths: an array of objects is uniform when at least this
	// many tenths of its items share most of the common keys.
	uniformShareTenths = 9
	// previewStringClip shortens long strings inside previewed items.
	previewStringClip = 300
	// identityClip shortens long identity values in the remaining-items list.
	identityClip = 80
	// smallValueBytes: envelope fields up to this size are shown inline.
	smallValueBytes = 120
	// maxEnvelopeFields caps the envelope fields listed.
	maxEnvelopeFields = 30
	// maxListedKeys caps the key list of a uniform array.
	maxListedKeys = 60
)

// identityFields name an item, in order of preference.
var identityFields = []string{"id", "name", "title", "slug", "key", "label"}

// mainArray finds the array a JSON document is "about": the document itself
// when it is an array, else the array reached by repeatedly descending into
// the single container value of an object that holds most of its bytes
// (e.g. {"results": [...]} or {"data": {"items": [...]}, "meta": {...}}).
// path holds child positions from the root.
func mainArray(doc *jval) (path []int, arr *jval, ok bool) {
	cur := doc
	for range maxEnvelopeDepth + 1 {
		if cur.kind == kArray {
			return path, cur, true
		}
		if cur.kind != kObject {
			return nil, nil, false
		}
		next := -1
		for i, c := range cur.vals {
			if c.isContainer() && c.size*10 >= cur.size*dominantTenths {
				next = i
				break
			}
		}
		if next < 0 {
			return nil, nil, false
		}
		path = append(path, next)
		cur = cur.vals[next]
	}
	return nil, nil, false
}

// uniformObjects reports whether arr is a non-empty array of objects that
// mostly share their keys: the common keys are those in at least half of
// the items, and an item fits when at least half of the common keys are
// among its keys and at least half of its keys are common.
func uniformObjects(arr *jval) bool {
	n := len(arr.vals)
	if n == 0 {
		return false
	}
	for _, it := range arr.vals {
		if it.kind != kObject {
			return false
		}
	}
	freq := map[string]int{}
	for keys, c := range keyRuns(arr.vals) {
		for _, k := range keys {
			freq[k] += c
		}
	}
	common := 0
	for k, c := range freq {
		if 2*c >= n {
			common++
		} else {
			delete(freq, k)
		}
	}
	if common == 0 {
		return false
	}
	fit := 0
	for keys, c := range keyRuns(arr.vals) {
		in := 0
		for _, k := range keys {
			if _, ok := freq[k]; ok {
				in++
			}
		}
		if 2*in >= common && 2*in >= len(keys) {
			fit += c
		}
	}
	return fit*10 >= n*uniformShareTenths
}

// keyRuns yields the key list of items once per run of consecutive items
// with the same keys, with the run's length: the records of a large array
// mostly repeat one key list, which is then looked up once, not per item.
func keyRuns(items []*jval) iter.Seq2[[]string, int] {
	return func(yield func([]string, int) bool) {
		for i := 0; i < len(items); {
			j := i + 1
			for j < len(items) && slices.Equal(items[j].keys, items[i].keys) {
				j++
			}
			if !yield(items[i].keys, j-i) {
				return
			}
			i = j
		}
	}
}

// scalarArray reports whether arr is a non-empty array of scalars, and
// names its items ("string", or "scalar value" if of mixed types).
func scalarArray(arr *jval) (string, bool) {
	if len(arr.vals) == 0 {
		return "", false
	}
	k := arr.vals[0].kind
	mixed := false
	for _, it := range arr.vals {
		if it.isContainer() {
			return "", false
		}
		mixed = mixed || it.kind != k
	}
	if mixed {
		return "scalar value", true
	}
	return k.String(), true
}

// summarizeJSON writes the summary of doc (the parsed output, bodyLen bytes
// as text), keeps the raw output through keep, and ends the summary with
// where to read it. It reports false, keeping nothing, when the summary
// would not be shorter than the output itself (e.g. many deep paths with
// long keys).
func summarizeJSON(doc *jval, bodyLen int, filtered bool, o Options, k *keeper) (text string, ok bool) {
	var b strings.Builder
	var example []string
	path, arr, found := mainArray(doc)
	if found {
		if noun, scalars := scalarArray(arr); scalars {
			example = writeArraySummary(&b, doc, path, arr, noun, bodyLen, o)
		} else if uniformObjects(arr) {
			example = writeArraySummary(&b, doc, path, arr, "object", bodyLen, o)
		} else {
			found = false
		}
	}
	if !found {
		example = writeKeyPathSummary(&b, doc, bodyLen)
	}
	fetch := func(id string) string {
		base := resultstore.URI(id, "")
		return fmt.Sprintf("Full result: %s (or %s/<json-path> for a part, e.g. %s); read it as a resource or with read_result {\"uri\": \"%s\"}",
			base, base, resultstore.URI(id, uriPath(example)), base)
	}
	if b.Len()+len(fetch(strings.Repeat("0", 32))) >= bodyLen {
		return "", false
	}
	id, err := k.keep()
	if err != nil {
		fmt.Fprintf(&b, "Full result could not be kept: %v.", err)
		return b.String(), true
	}
	b.WriteString(fetch(id))
	if filtered {
		b.WriteString("\n(The stored result is the complete output from before the intent filter; paths address it.)")
	}
	return b.String(), true
}

// writeArraySummary summarises arr (at path in doc): count, keys, the first
// items and the identities of the rest. It returns an example part path.
func writeArraySummary(b *strings.Builder, doc *jval, path []int, arr *jval, noun string, bodyLen int, o Options) []string {
	n := len(arr.vals)
	keys := keysAlong(doc, path)
	fmt.Fprintf(b, "[JSON summary (%s): array of %s", fmtKB(bodyLen), count(n, noun))
	if len(keys) > 0 {
		b.WriteString(" at " + dispPath(keys))
	}
	b.WriteString("]\n")
	writeEnvelope(b, doc, path, keys)

	if noun == "object" {
		writeKeyList(b, arr)
	}
	shown := min(n, o.ChunkPreviewItems)
	if shown == n {
		fmt.Fprintf(b, "All %s:\n[\n", count(n, "item"))
	} else {
		fmt.Fprintf(b, "First %s:\n[\n", count(shown, "item"))
	}
	for i := range shown {
		b.WriteString(arr.vals[i].compact(previewStringClip))
		if i < shown-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	if shown < n {
		writeIdentities(b, arr.vals[shown:], shown, max(1024, o.ChunkThreshold/2))
	}
	return append(keys, strconv.Itoa(min(shown, n-1)))
}

// writeEnvelope lists the fields around the path to the main array.
func writeEnvelope(b *strings.Builder, doc *jval, path []int, keys []string) {
	var lines []string
	more := 0
	cur := doc
	for depth, idx := range path {
		for i, k := range cur.keys {
			if i == idx {
				continue
			}
			if len(lines) == maxEnvelopeFields {
				more++
				continue
			}
			p := append(append([]string(nil), keys[:depth]...), k)
			v := cur.vals[i]
			if v.size <= smallValueBytes {
				lines = append(lines, "  "+dispPath(p)+" = "+v.compact(0))
			} else {
				lines = append(lines, "  "+dispPath(p)+" ("+describe(v)+")")
			}
		}
		cur = cur.vals[idx]
	}
	if len(lines) == 0 {
		return
	}
	b.WriteString("Other fields:\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if more > 0 {
		fmt.Fprintf(b, "  … (%d more)\n", more)
	}
}

// describe gives type and size of a value, e.g. "array, 12 items, 3.1KB".
func describe(v *jval) string {
	switch v.kind {
	case kObject:
		return fmt.Sprintf("object, %s, %s", count(len(v.keys), "key"), fmtSize(v.size))
	case kArray:
		return fmt.Sprintf("array, %s, %s", count(len(v.vals), "item"), fmtSize(v.size))
	case kString:
		return fmt.Sprintf("string, %s", fmtSize(len(v.s)))
	default:
		return v.kind.String()
	}
}

// writeKeyList writes the union of the items' keys in first-seen order,
// marking keys that only some items have.
func writeKeyList(b *strings.Builder, arr *jval) {
	var keys []string
	seen := map[string]int{}
	for itemKeys, c := range keyRuns(arr.vals) {
		for _, k := range itemKeys {
			if seen[k] == 0 {
				keys = append(keys, k)
			}
			seen[k] += c
		}
	}
	n := len(arr.vals)
	b.WriteString("Keys: ")
	for i, k := range keys {
		if i == maxListedKeys {
			fmt.Fprintf(b, ", … (%d more)", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(dispKey(k))
		if c := seen[k]; c < n {
			fmt.Fprintf(b, " (in %d of %d)", c, n)
		}
	}
	b.WriteByte('\n')
}

// identity returns the first present identity field of an object item and
// its value.
func identity(it *jval) (field string, val *jval, ok bool) {
	if it.kind != kObject {
		return "", nil, false
	}
	for _, f := range identityFields {
		for i, k := range it.keys {
			v := it.vals[i]
			if !strings.EqualFold(k, f) || v.isContainer() || v.kind == kNull {
				continue
			}
			return k, v, true
		}
	}
	return "", nil, false
}

// identityText is an identity value as JSON (strings clipped).
func identityText(v *jval) string {
	if v.kind == kString {
		return v.compact(identityClip)
	}
	return v.s // a number or boolean, as written
}

// writeIdentities lists the items not shown by their identity. When every
// identified item uses the same field the values are listed bare, otherwise
// as field=value; items without one show as #index. If no item has an
// identity only the count is given. The list stops after about budget bytes.
// Every item's identity field is looked up (the fields head the list), but
// only the tokens the list reaches are written out: a large array is cut
// after a few hundred.
func writeIdentities(b *strings.Builder, rest []*jval, start, budget int) {
	type ident struct {
		field string
		val   *jval
	}
	ids := make([]ident, len(rest))
	var fields []string
	for i, it := range rest {
		f, v, ok := identity(it)
		if !ok {
			continue
		}
		ids[i] = ident{f, v}
		found := false
		for _, g := range fields {
			found = found || g == f
		}
		if !found {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		fmt.Fprintf(b, "Remaining %s not shown.\n", count(len(rest), "item"))
		return
	}
	fmt.Fprintf(b, "Remaining %s (%s): ", count(len(rest), "item"), strings.Join(fields, "/"))
	token := func(i int) string {
		switch id := ids[i]; {
		case id.field == "":
			return "#" + strconv.Itoa(start+i)
		case len(fields) == 1:
			return identityText(id.val)
		default:
			return id.field + "=" + identityText(id.val)
		}
	}
	written, i := 0, 0
	for i < len(ids) {
		s, n := runOf(len(ids), token, i)
		if written > 0 && written+len(s) > budget {
			fmt.Fprintf(b, ", … (+%d more)", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
		written += len(s) + 2
		i += n
	}
	b.WriteByte('\n')
}

// minRun is the shortest run of consecutive integers written as a range.
const minRun = 3

// runAt returns how to write tokens[i:]: a run of at least minRun
// consecutive integers ("5", "6", "7", or "#5", "#6", "#7") becomes one
// range ("5-7", "#5-7"), anything else the token itself; n is the number of
// tokens consumed.
func runAt(tokens []string, i int) (s string, n int) {
	return runOf(len(tokens), func(j int) string { return tokens[j] }, i)
}

// runOf is runAt over count tokens given by token(j), each asked for once
// at most.
func runOf(count int, token func(int) string, i int) (s string, n int) {
	first := token(i)
	prefix, v0, ok := intToken(first)
	if !ok {
		return first, 1
	}
	n = 1
	for i+n < count {
		p, v, ok := intToken(token(i + n))
		if !ok || p != prefix || v != v0+int64(n) {
			break
		}
		n++
	}
	if n < minRun {
		return first, 1
	}
	return fmt.Sprintf("%s%d-%d", prefix, v0, v0+int64(n-1)), n
}

// intToken splits a token that is a decimal integer, optionally after "#",
// written canonically (no sign, no leading zeros).
func intToken(t string) (prefix string, v int64, ok bool) {
	prefix, digits := "", t
	if strings.HasPrefix(t, "#") {
		prefix, digits = "#", t[1:]
	}
	if digits == "" || (digits[0] == '0' && len(digits) > 1) {
		return "", 0, false
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			return "", 0, false
		}
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return prefix, v, true
}

// keysAlong returns the object keys along path (child positions) in doc.
func keysAlong(doc *jval, path []int) []string {
	keys := make([]string, 0, len(path))
	cur := doc
	for _, i := range path {
		keys = append(keys, cur.keys[i])
		cur = cur.vals[i]
	}
	return keys
}

// dispKey shows a key in a " > " path, quoting it when it would be
// ambiguous.
func dispKey(k string) string {
	if k == "" || strings.Contains(k, ">") || strings.TrimSpace(k) != k ||
		strings.ContainsFunc(k, func(r rune) bool { return r < 0x20 }) {
		return strconv.Quote(k)
	}
	return k
}

func dispPath(keys []string) string {
	d := make([]string, len(keys))
	for i, k := range keys {
		d[i] = dispKey(k)
	}
	return strings.Join(d, " > ")
}

// uriPath joins path segments for a result URI, percent-escaping each.
func uriPath(segs []string) string {
	e := make([]string, len(segs))
	for i, s := range segs {
		e[i] = url.PathEscape(s)
	}
	return strings.Join(e, "/")
}

// count returns "1 item", "2 items" and so on.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// fmtSize formats small sizes in bytes and larger ones like fmtKB.
func fmtSize(n int) string {
	if n < 1024 {
		return strconv.Itoa(n) + " B"
	}
	return fmtKB(n)
}
