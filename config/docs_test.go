package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// configurationDoc is the reference page of every configuration key,
// relative to this package's directory.
const configurationDoc = "../docs/configuration.md"

// docsCacheHome stands for $XDG_CACHE_HOME when the test computes the
// defaults, so that server.cache_dir does not depend on the environment the
// test runs in; the page spells it "$XDG_CACHE_HOME".
const docsCacheHome = "/xdg-cache-home"

// docsDataHome stands for $XDG_DATA_HOME as docsCacheHome does for
// $XDG_CACHE_HOME (store.data_dir).
const docsDataHome = "/xdg-data-home"

// TestConfigurationDocs checks docs/configuration.md against Default(): every
// leaf key of Config (by its koanf tags; backends.<name>.… for the keys of a
// backend, with defaultBackend's defaults) must have a row in a table of the
// page with a key, type, default and meaning column, its type spelled for
// its Go type, and its default spelled as Default() has it (durations as
// "30s" or "15m", sizes as plain numbers; an empty default as `""`, `[]`,
// `{}`, `false` or —). A row for a key Config does not have is an error too.
func TestConfigurationDocs(t *testing.T) {
	text, err := os.ReadFile(configurationDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows, problems := docRows(string(text))

	cfg := Default()
	cfg.Server.CacheDir = defaultCacheDir(func(k string) (string, bool) {
		if k == "XDG_CACHE_HOME" {
			return docsCacheHome, true
		}
		return "", false
	})
	cfg.Store.DataDir = defaultDataDir(func(k string) (string, bool) {
		if k == "XDG_DATA_HOME" {
			return docsDataHome, true
		}
		return "", false
	})
	elemDefaults := map[reflect.Type]reflect.Value{
		reflect.TypeFor[Backend]():     reflect.ValueOf(defaultBackend()),
		reflect.TypeFor[StaticToken](): reflect.ValueOf(StaticToken{}),
		reflect.TypeFor[AccessRule]():  reflect.ValueOf(AccessRule{}),
	}
	var leaves []configLeaf
	problems = append(problems, collectLeaves(reflect.ValueOf(*cfg), "", elemDefaults, &leaves)...)
	if len(leaves) < 40 {
		t.Fatalf("found only %d configuration keys in Config; the walk is broken", len(leaves))
	}

	known := map[string]bool{}
	for _, leaf := range leaves {
		known[leaf.key] = true
		row, ok := rows[leaf.key]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not documented (want a table row | `%s` | %s | `%s` | meaning |)",
				leaf.key, leaf.key, typeSpelling(leaf.value.Type()), defaultSpellings(leaf.value)[0]))
			continue
		}
		problems = append(problems, checkRow(leaf, row)...)
	}
	for key, row := range rows {
		if !known[key] {
			problems = append(problems, fmt.Sprintf("%s (line %d): documented, but Config has no such key", key, row.line))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Errorf("%s does not match config.Default() (%d problems):\n  %s",
			filepath.ToSlash(configurationDoc), len(problems), strings.Join(problems, "\n  "))
	}
}

// configLeaf is one configuration key and its default value.
type configLeaf struct {
	key   string
	value reflect.Value
}

// collectLeaves appends the leaf keys of the struct v, under prefix, to out.
// Nested structs are walked; a map of structs is walked once with "<name>"
// for its key, from the element default elemDefaults gives; durations,
// scalars, lists and maps of scalars are leaves.
func collectLeaves(v reflect.Value, prefix string, elemDefaults map[reflect.Type]reflect.Value, out *[]configLeaf) []string {
	var problems []string
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("koanf")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" {
			problems = append(problems, fmt.Sprintf("%s.%s: field has no koanf tag", t.Name(), f.Name))
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		fv := v.Field(i)
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			*out = append(*out, configLeaf{key, fv})
		case f.Type.Kind() == reflect.Struct:
			problems = append(problems, collectLeaves(fv, key, elemDefaults, out)...)
		case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
			def, ok := elemDefaults[f.Type.Elem()]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: a map of %s; give the test its element default", key, f.Type.Elem()))
				continue
			}
			problems = append(problems, collectLeaves(def, key+".<name>", elemDefaults, out)...)
		default:
			*out = append(*out, configLeaf{key, fv})
		}
	}
	return problems
}

// docRow is one row of a key table of the page.
type docRow struct {
	line                 int
	typ, def, meaning    string
	hasTyp, hasDef, hasM bool
}

// docRows reads every markdown table of text whose header has a "key"
// column and returns its rows by key (the first code span of the key cell).
func docRows(text string) (map[string]docRow, []string) {
	rows := map[string]docRow{}
	var problems []string
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !isTableLine(lines[i]) || !isSeparator(lines[i+1]) {
			continue
		}
		col := map[string]int{}
		for j, h := range tableCells(lines[i]) {
			col[strings.ToLower(strings.TrimSpace(h))] = j
		}
		keyCol, ok := col["key"]
		i += 2
		for ; i < len(lines) && isTableLine(lines[i]); i++ {
			if !ok {
				continue
			}
			cells := tableCells(lines[i])
			cell := func(name string) (string, bool) {
				j, ok := col[name]
				if !ok || j >= len(cells) {
					return "", false
				}
				return strings.TrimSpace(cells[j]), true
			}
			if keyCol >= len(cells) {
				continue
			}
			key := firstCode(cells[keyCol])
			if key == "" {
				continue
			}
			r := docRow{line: i + 1}
			r.typ, r.hasTyp = cell("type")
			r.def, r.hasDef = cell("default")
			r.meaning, r.hasM = cell("meaning")
			if prev, dup := rows[key]; dup {
				problems = append(problems, fmt.Sprintf("%s (line %d): documented twice (also line %d)", key, r.line, prev.line))
			}
			rows[key] = r
		}
	}
	return rows, problems
}

func isTableLine(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "|") }

func isSeparator(s string) bool {
	s = strings.TrimSpace(s)
	return isTableLine(s) && strings.Trim(s, "|-: ") == ""
}

// tableCells splits a table line into its cells; "\|" is a pipe inside a
// cell.
func tableCells(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	s = strings.TrimSuffix(s, "|")
	var (
		cells []string
		b     strings.Builder
	)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, b.String())
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	return append(cells, b.String())
}

// firstCode returns the text of the first `code span` in s, or "".
func firstCode(s string) string {
	_, rest, ok := strings.Cut(s, "`")
	if !ok {
		return ""
	}
	code, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return code
}

// cellValue is what a default cell states: its leading code span, or else
// its first word.
func cellValue(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "`") {
		return firstCode(s)
	}
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// checkRow compares one documented row with the key's type and default.
func checkRow(leaf configLeaf, row docRow) []string {
	var problems []string
	at := fmt.Sprintf("%s (line %d)", leaf.key, row.line)
	if !row.hasTyp || !row.hasDef || !row.hasM {
		return []string{at + ": the row needs a type, a default and a meaning cell (its table: key, type, default and meaning columns)"}
	}
	if want := typeSpelling(leaf.value.Type()); !strings.HasPrefix(strings.ToLower(row.typ), want) {
		problems = append(problems, fmt.Sprintf("%s: type is %q, want %q", at, row.typ, want))
	}
	spellings := defaultSpellings(leaf.value)
	if got := cellValue(row.def); !slices.Contains(spellings, got) {
		problems = append(problems, fmt.Sprintf("%s: default is %q, want %s (Default() has %s)",
			at, got, strings.Join(quoteAll(spellings), " or "), goValue(leaf.value)))
	}
	if row.meaning == "" {
		problems = append(problems, at+": no meaning")
	}
	return problems
}

// typeSpelling is how the page names a Go type in its type column.
func typeSpelling(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return "duration"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Slice:
		return "list of " + typeSpelling(t.Elem()) + "s"
	case t.Kind() == reflect.Map:
		return "map of " + typeSpelling(t.Elem()) + "s"
	}
	return t.String()
}

// defaultSpellings lists the ways the page may write the default v.
func defaultSpellings(v reflect.Value) []string {
	const none = "—" // no value, or one derived from other keys
	if d, ok := v.Interface().(time.Duration); ok {
		if d == 0 {
			return []string{none}
		}
		return slices.Compact([]string{shortDuration(d), d.String()})
	}
	switch v.Kind() {
	case reflect.Bool:
		return []string{strconv.FormatBool(v.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() == 0 {
			return []string{"0", none}
		}
		return []string{strconv.FormatInt(v.Int(), 10)}
	case reflect.String:
		if v.String() == "" {
			return []string{`""`, none}
		}
		s := filepath.ToSlash(v.String())
		s = strings.Replace(s, docsCacheHome, "$XDG_CACHE_HOME", 1)
		return []string{strings.Replace(s, docsDataHome, "$XDG_DATA_HOME", 1)}
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{"[]", none}
		}
		items := make([]string, v.Len())
		for i := range items {
			items[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return []string{"[" + strings.Join(items, ", ") + "]"}
	case reflect.Map:
		if v.Len() == 0 {
			return []string{"{}", none}
		}
		var items []string
		for _, k := range v.MapKeys() {
			items = append(items, fmt.Sprintf("%v: %v", k.Interface(), v.MapIndex(k).Interface()))
		}
		slices.Sort(items)
		return []string{"{" + strings.Join(items, ", ") + "}"}
	}
	return []string{fmt.Sprint(v.Interface())}
}

// shortDuration writes d the way a person would: 15m, not 15m0s; 1h, not
// 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// goValue writes v for a message: strings quoted, so that "" shows.
func goValue(v reflect.Value) string {
	if v.Kind() == reflect.String {
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}
