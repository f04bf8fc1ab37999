package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
)

// Records of real runs (V8, Go SDK backends in process) are stored without
// their repeats and read back as the same JSON: a structured result's
// text, a program result that is what its call answered, and a result the
// output stage stored whole (isogate://result/{id}), read from there: a
// JSON value small enough to be kept whole in the record, one the record
// keeps truncated, and a string; each stored record is smaller than the
// plain one.
func TestRunRecordsStoredWithoutRepeats(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	stored := func(uri string) ([]byte, error) {
		id, _, err := resultstore.ParseURI(uri)
		if err != nil {
			return nil, err
		}
		return f.store.Get(ctx, "", id)
	}
	cases := []struct {
		name, code string
		maxOutput  int
		gone       string // what the stored record no longer holds
	}{
		{"structured, returned as is", "return await everything.add({a: 1, b: 2})", 0, `"text":`},
		{"json output stored whole", "const r = await everything.items({n: 40}); return r.map(i => ({...i, n: 1}))", 2000, `"result":[`},
		{"json output past the record's bound", "return Array.from({length: 800}, (_, i) => ({i, pad: 'x'.repeat(100)}))", 2000, `"result":{"truncated"`},
		{"string output stored whole", "return 'line of text\\n'.repeat(400)", 2000, `"result":"line`},
	}
	for _, c := range cases {
		resp := f.engine.Execute(ctx, Request{Code: c.code, MaxOutputSize: c.maxOutput})
		if resp.IsError {
			t.Fatalf("%s: %s", c.name, resp.Text)
		}
		rec := resp.Record
		if c.maxOutput > 0 && rec.ResultURI == "" {
			t.Fatalf("%s: the output was not stored: %s", c.name, resp.Text)
		}
		plain, _ := json.Marshal(rec)
		if !strings.Contains(string(plain), c.gone) {
			t.Fatalf("%s: the plain record lacks %s", c.name, c.gone)
		}
		data, err := pipeline.EncodeRecord(rec, stored)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), c.gone) || len(data) >= len(plain) {
			t.Errorf("%s: the stored record (%d bytes for %d) still holds %s", c.name, len(data), len(plain), c.gone)
		}
		back, err := pipeline.DecodeRecord(data, stored)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(back); string(again) != string(plain) {
			t.Errorf("%s: read back\n%.600s\nwant\n%.600s", c.name, again, plain)
		}
		t.Logf("%s: %d bytes stored for %d plain", c.name, len(data), len(plain))
	}
}
