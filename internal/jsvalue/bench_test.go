package jsvalue_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/isogate/isogate/v8sandbox"
)

// BenchmarkPlainDataCheck times, inside V8 and in a fresh context each
// run (as every program's result is), the plain-data check of ~1 MB of
// parsed records (the bench's 1 MB tool result, as a program returning it
// holds it) beside JSON.stringify of the same value: the two passes the
// serializer makes over a plain result. The check runs cold, in the
// interpreter at first; a second check of the same value shows what it
// costs once V8 has optimized it.
//
//	go test -run '^$' -bench PlainDataCheck -benchtime 20x ./internal/jsvalue/
func BenchmarkPlainDataCheck(b *testing.B) {
	pool := v8sandbox.NewPool(v8sandbox.Options{Workers: 1})
	defer pool.Close()
	src := `(() => {
const items = [];
for (let i = 0; i < 14000; i++) items.push({id: i, name: "item " + i, price: i + 0.5, tags: ["a", "b"], ok: true});
const v = JSON.parse(JSON.stringify({items}));
const t0 = Date.now();
if (!__plain(v)) throw new Error("not plain");
const t1 = Date.now();
JSON.stringify(v);
const t2 = Date.now();
__plain(v);
return [t1 - t0, t2 - t1, Date.now() - t2];
})()`
	var cold, stringify, warm float64
	for b.Loop() {
		res, err := pool.Run(context.Background(), v8sandbox.Job{Source: src, AwaitResult: true, Prelude: serializerPrelude}, nil)
		if err != nil {
			b.Fatal(err)
		}
		var ms [3]float64
		if err := json.Unmarshal(res.Value, &ms); err != nil {
			b.Fatal(err)
		}
		cold, stringify, warm = cold+ms[0], stringify+ms[1], warm+ms[2]
	}
	n := float64(b.N)
	b.ReportMetric(cold/n, "check-ms/op")
	b.ReportMetric(stringify/n, "stringify-ms/op")
	b.ReportMetric(warm/n, "check-again-ms/op")
}
