package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// collector gathers the problems found while loading, and knows where each
// value came from so that problems with overridden values say so.
type collector struct {
	problems []Problem
	// origins maps a key set by an override to a description of the
	// override, such as "environment variable ISOGATE_SERVER__HTTP".
	origins map[string]string
	// mcp is set when the file is a Claude-style mcpServers file, whose
	// entries are shown as mcpServers.<name> rather than backends.<name>.
	mcp bool
}

func newCollector() *collector {
	return &collector{origins: map[string]string{}}
}

// add records a problem with the value at key.
func (c *collector) add(key, msg string) {
	c.problems = append(c.problems, Problem{Key: c.display(key), Message: msg + c.note(key)})
}

// addRaw records a problem whose key is shown as it is.
func (c *collector) addRaw(key, msg string) {
	c.problems = append(c.problems, Problem{Key: key, Message: msg})
}

// unknown records an unknown key; known are the keys valid at its level.
func (c *collector) unknown(key, name string, parent string, known []string) {
	msg := fmt.Sprintf("unknown key %q", c.display(key))
	if s := suggest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", c.display(joinKey(parent, s)))
	}
	note := c.note(key)
	if note == "" {
		// An unknown section set only by overrides, such as
		// ISOGATE_SANBOX__TIMEOUT: name the first of them.
		for _, k := range sortedKeys(c.origins) {
			if strings.HasPrefix(k, key+".") {
				note = " (from " + c.origins[k] + ")"
				break
			}
		}
	}
	c.problems = append(c.problems, Problem{Key: c.display(key), Message: msg + note, keyInMessage: true})
}

// origin returns the override that set key or one of its parents, or "" if
// the value comes from the file.
func (c *collector) origin(key string) string {
	best, src := "", ""
	for k, o := range c.origins {
		if (key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[")) && len(k) >= len(best) {
			best, src = k, o
		}
	}
	return src
}

func (c *collector) note(key string) string {
	if o := c.origin(key); o != "" {
		return " (from " + o + ")"
	}
	return ""
}

// display returns key as the user wrote it: in an mcpServers file,
// backends.<name> is mcpServers.<name>.
func (c *collector) display(key string) string {
	if c.mcp && c.origin(key) == "" && (key == "backends" || strings.HasPrefix(key, "backends.")) {
		return "mcpServers" + strings.TrimPrefix(key, "backends")
	}
	return key
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	backendType  = reflect.TypeFor[Backend]()
)

// decode stores in into out, which already holds the default value, and
// records a problem for every value of the wrong type and every unknown key.
// A nil in (a key given without a value) leaves the default in place.
func (c *collector) decode(key string, in any, out reflect.Value) {
	if in == nil {
		return
	}
	if out.Type() == durationType {
		s, ok := in.(string)
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if !ok || err != nil {
			c.add(key, fmt.Sprintf(`expected a duration such as "30s" or "1m30s", got %s`, describe(in)))
			return
		}
		out.SetInt(int64(d))
		return
	}
	switch out.Kind() {
	case reflect.String:
		s, ok := toString(in)
		if !ok {
			c.add(key, "expected a string, got "+describe(in))
			return
		}
		out.SetString(s)
	case reflect.Bool:
		b, ok := toBool(in)
		if !ok {
			c.add(key, "expected true or false, got "+describe(in))
			return
		}
		out.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, ok := toInt(in)
		if !ok || out.OverflowInt(n) {
			c.add(key, "expected an integer, got "+describe(in))
			return
		}
		out.SetInt(n)
	case reflect.Slice:
		c.decodeList(key, in, out)
	case reflect.Map:
		c.decodeMap(key, in, out)
	case reflect.Struct:
		c.decodeStruct(key, in, out)
	default:
		panic("config: cannot decode into " + out.Type().String())
	}
}

func (c *collector) decodeList(key string, in any, out reflect.Value) {
	var items []any
	switch v := in.(type) {
	case []any:
		items = v
	case string:
		if c.origin(key) == "" {
			c.add(key, "expected a list of strings, got "+describe(in))
			return
		}
		// Overrides give lists comma-separated.
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
	default:
		c.add(key, "expected a list of strings, got "+describe(in))
		return
	}
	list := reflect.MakeSlice(out.Type(), len(items), len(items))
	for i, item := range items {
		c.decode(indexKey(key, i), item, list.Index(i))
	}
	out.Set(list)
}

func (c *collector) decodeMap(key string, in any, out reflect.Value) {
	m, ok := in.(map[string]any)
	if !ok {
		c.add(key, "expected a map, got "+describe(in))
		return
	}
	if out.IsNil() {
		out.Set(reflect.MakeMapWithSize(out.Type(), len(m)))
	}
	for _, k := range sortedKeys(m) {
		elem := reflect.New(out.Type().Elem()).Elem()
		if old := out.MapIndex(reflect.ValueOf(k)); old.IsValid() {
			elem.Set(old)
		} else if elem.Type() == backendType {
			elem.Set(reflect.ValueOf(defaultBackend()))
		}
		c.decode(joinKey(key, k), m[k], elem)
		out.SetMapIndex(reflect.ValueOf(k), elem)
	}
}

func (c *collector) decodeStruct(key string, in any, out reflect.Value) {
	m, ok := in.(map[string]any)
	if !ok {
		c.add(key, "expected a map, got "+describe(in))
		return
	}
	t := out.Type()
	fields := map[string]int{}
	var names []string
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("koanf")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = i
		names = append(names, name)
	}
	for _, k := range sortedKeys(m) {
		i, ok := fields[k]
		if !ok {
			c.unknown(joinKey(key, k), k, key, names)
			continue
		}
		c.decode(joinKey(key, k), m[k], out.Field(i))
	}
}

// describe shows a value of the wrong type in a problem.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "a map"
	case nil:
		return "nothing"
	default:
		return fmt.Sprint(v)
	}
}

// toString accepts strings and, since YAML, JSON and TOML write them
// unquoted, numbers and booleans.
func toString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// toBool accepts booleans and, as overrides are strings, strings that
// strconv.ParseBool accepts.
func toBool(v any) (bool, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		return b, err == nil
	}
	return false, false
}

// toInt accepts integers, whole floats (JSON numbers are floats) and, as
// overrides are strings, decimal strings.
func toInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// joinKey appends a segment to a key path, quoting segments that would be
// ambiguous (empty, or holding dots, spaces, brackets or quotes).
func joinKey(path, seg string) string {
	if seg == "" || strings.ContainsAny(seg, `."[]`) || strings.IndexFunc(seg, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) >= 0 {
		seg = strconv.Quote(seg)
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}

func indexKey(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// keyAliases maps names other tools use to isogate's.
var keyAliases = map[string]string{
	"type":        "transport",
	"arguments":   "args",
	"environment": "env",
	"endpoint":    "url",
}

// suggest returns the name in known closest to name, or "" if none is
// close enough to be a likely typo.
func suggest(name string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	n := norm(name)
	if a, ok := keyAliases[n]; ok && slices.Contains(known, a) {
		return a
	}
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		d := editDistance(n, norm(k))
		if len(n) >= 3 && strings.HasPrefix(norm(k), n) {
			d = min(d, 1) // a truncated key, such as "max_heap" for "max_heap_mb"
		}
		if d < bestDist {
			best, bestDist = k, d
		}
	}
	limit := 1
	if len(n) >= 5 {
		limit = max(2, len(n)/4)
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// the insertions, deletions, substitutions and transpositions of two
// adjacent characters that turn one into the other ("evn" is one from
// "env", where Levenshtein counts two).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	before := make([]int, len(rb)+1) // row i-2
	prev := make([]int, len(rb)+1)   // row i-1
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(rb)]
}
