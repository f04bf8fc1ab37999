package output

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/jsonscan"
)

// Shape given the compact form of a pretty-printed output (Options.Compact)
// returns what it returns parsing the output itself, through every stage:
// the tree built from either is the same.
func TestShapeFromCompactMatchesOutput(t *testing.T) {
	var records, envelope, mixed strings.Builder
	records.WriteString("[")
	for i := range 400 {
		if i > 0 {
			records.WriteString(",")
		}
		fmt.Fprintf(&records, `{"id":%d,"name":"item \"%d\" é \ud83d\ude00 \ud800","price":%d.25,"tags":["a","b\n"],"ok":%v,"note":null}`, i, i, i, i%2 == 0)
	}
	records.WriteString("]")
	fmt.Fprintf(&envelope, `{"meta":{"page":1,"owner":"dee"},"data":{"items":%s}}`, records.String())
	mixed.WriteString(`{"a":{`)
	for i := range 300 {
		if i > 0 {
			mixed.WriteString(",")
		}
		fmt.Fprintf(&mixed, `"key %d":{"deep":[%d,{"x":"%s"}]}`, i, i, strings.Repeat("y", i%40))
	}
	mixed.WriteString(`},"b":[1,"two",null,true,{}]}`)
	for _, c := range []struct{ name, compact, intent string }{
		{"records", records.String(), ""},
		{"records with intent", records.String(), "item 17 ok=true"},
		{"envelope", envelope.String(), ""},
		{"envelope with intent", envelope.String(), "owner=dee item 3"},
		{"key paths", mixed.String(), ""},
		{"key paths with intent", mixed.String(), "key 12"},
		{"small", `{"a":[1,2,3]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pretty, err := jsonscan.AppendIndent(nil, []byte(c.compact), "  ")
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int{0, 3000, 40000} {
				opts := DefaultOptions()
				opts.ValidJSON = true
				opts.MaxOutputSize = limit
				want := Shape(context.Background(), string(pretty), c.intent, opts, newStore(1<<24))
				opts.Compact = c.compact
				got := Shape(context.Background(), string(pretty), c.intent, opts, newStore(1<<24))
				got.Text = strings.ReplaceAll(got.Text, got.StoredID, want.StoredID) // ids are random
				got.StoredID = want.StoredID
				if got != want {
					t.Errorf("limit %d: from the compact form\n%+v\nfrom the output\n%+v", limit, got, want)
				}
			}
		})
	}
}
