package output

import (
	"context"
	"time"

	"encoding/json"
	"github.com/isogate/isogate/internal/resultstore"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestJSONTreeRoundTrip(t *testing.T) {
	in := ` {"z":1,"a":[true,null,"q\"\\\n\t\u0001<>&\u00e9\ud83d\ude00"],"m":{"k":-1.5e+10,"e":{}, "l":[ ]}} `
	v, ok := parseJSON(in, false)
	if !ok {
		t.Fatal("parse failed")
	}
	compact := v.compact(0)
	if want := `{"z":1,"a":[true,null,"q\"\\\n\t\u0001<>&é😀"],"m":{"k":-1.5e+10,"e":{},"l":[]}}`; compact != want {
		t.Fatalf("compact = %s, want %s", compact, want)
	}
	if v.size != len(compact) {
		t.Fatalf("size %d, compact length %d", v.size, len(compact))
	}
	if got := parseOrFail(t, `{"b":[1,{"c":[]}],"a":{}}`).pretty(); got != "{\n  \"b\": [\n    1,\n    {\n      \"c\": []\n    }\n  ],\n  \"a\": {}\n}" {
		t.Fatalf("pretty layout:\n%s", got)
	}
	for _, notContainer := range []string{`"str"`, `12`, `null`, ``, `  `, `[1,`, `{"a":1} x`, `{"a":1}{}`} {
		if _, ok := parseJSON(notContainer, false); ok {
			t.Errorf("parseJSON(%q) succeeded", notContainer)
		}
	}
}

func TestJSONStringClip(t *testing.T) {
	got := string(appendJSONString(nil, strings.Repeat("日", 10), 7))
	if want := `"日日…(+24 bytes)"`; got != want {
		t.Fatalf("clip = %s, want %s", got, want)
	}
}

func parseOrFail(t testing.TB, s string) *jval {
	t.Helper()
	v, ok := parseJSON(s, false)
	if !ok {
		t.Fatalf("parse %s failed", s)
	}
	return v
}

// FuzzParseJSON checks the tree parser against encoding/json: it accepts
// exactly the valid JSON containers, and both its compact and pretty
// encodings decode to the same value as the input.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `[ "x\u00e9\n", -0.5e3, true ]`, `{"":{}, "k":"\ud800"}`, "[\"\xff\"]", `[1,]`, "[]\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseJSON(s, false)
		t0 := strings.Trim(s, " \t\r\n")
		isContainer := t0 != "" && (t0[0] == '{' || t0[0] == '[')
		if want := isContainer && json.Valid([]byte(s)); ok != want {
			t.Fatalf("parseJSON ok = %v, want %v", ok, want)
		}
		if !ok {
			return
		}
		// A caller that knows s is valid skips the check and gets the
		// same tree.
		if trusted, ok := parseJSON(s, true); !ok || trusted.compact(0) != v.compact(0) {
			t.Fatalf("parsed as known valid: %v, %v", ok, trusted)
		}
		var want any
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		for _, enc := range []string{v.compact(0), v.pretty()} {
			var got any
			if err := json.Unmarshal([]byte(enc), &got); err != nil {
				t.Fatalf("re-encoding %q is invalid: %v", enc, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("re-encoding %q decodes to %v, input to %v", enc, got, want)
			}
		}
		if c := v.compact(0); v.size != len(c) {
			t.Fatalf("size %d, compact length %d", v.size, len(c))
		}
	})
}

func BenchmarkParseJSON(b *testing.B) {
	raw := jsonArray(30000, issue) // ~9MB
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		parseJSON(raw, false)
	}
}

// recordsJSON is a ~1 MB array of small uniform records (the shape of the
// 1 MB tool result of bench's tier-3 rows), compact.
func recordsJSON() string {
	var doc strings.Builder
	doc.WriteString(`{"items":[`)
	for i := 0; doc.Len() < 1<<20; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(`{"id":` + strconv.Itoa(i) + `,"name":"item ` + strconv.Itoa(i) + `","price":` + strconv.Itoa(i) + `.5,"tags":["a","b"],"ok":true}`)
	}
	doc.WriteString(`]}`)
	return doc.String()
}

// BenchmarkParseRecords: the tree of recordsJSON pretty-printed as the
// engine renders a program's value.
func BenchmarkParseRecords(b *testing.B) {
	raw := parseOrFail(b, recordsJSON()).pretty()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		parseJSON(raw, true)
	}
}

// Objects in a row share their key list only when the keys are the same,
// in the same order; the tree reads back exactly, with its sizes.
func TestJSONTreeSharedKeyLists(t *testing.T) {
	in := `[{"a":1,"b":2},{"a":3,"b":4},{"a":3,"c":4},{"b":5,"a":6},{"a":"plain é"},{"a":8,"b":9,"c":[{"a":0,"b":0},{}]},{"a":1,"b":2}]`
	v := parseOrFail(t, in)
	if got := v.compact(0); got != in {
		t.Fatalf("compact = %s, want %s", got, in)
	}
	if v.size != len(in) {
		t.Fatalf("size %d, compact length %d", v.size, len(in))
	}
}

// BenchmarkShapeRecords shapes the ~1 MB records (BenchmarkParseRecords)
// as the engine does a program's value: the indented text with its compact
// form, every stage on, a memory store.
//
//	go test -run '^$' -bench ShapeRecords -benchtime 50x ./internal/codemode/output/
func BenchmarkShapeRecords(b *testing.B) {
	compact := recordsJSON()
	raw := parseOrFail(b, compact).pretty()
	opts := DefaultOptions()
	opts.ValidJSON, opts.Compact = true, compact
	store := resultstore.NewMemory(resultstore.Limits{TTL: time.Hour, MaxBytes: 1 << 30, OwnerBytes: 1 << 30})
	b.SetBytes(int64(len(compact)))
	for b.Loop() {
		if r := Shape(context.Background(), raw, "", opts, store); !r.Chunked {
			b.Fatal("not chunked")
		}
	}
}
