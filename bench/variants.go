package bench

import (
	"io"
	"log/slog"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// Names of the built-in variants.
const (
	VariantV8Pool   = "v8-pool"
	VariantV8Proc   = "v8-proc"
	VariantV8Fresh  = "v8-fresh"
	VariantGojaSync = "goja-sync"
	VariantGojaLoop = "goja-loop"
)

// Baseline is the variant every ratio is computed against.
const Baseline = VariantV8Pool

func init() {
	RegisterVariant(VariantSpec{
		Name:  VariantV8Pool,
		Order: 10,
		Label: "isogate V8: warm isolate pool, fresh context per run, thread isolation (`v8sandbox.NewPool`)",
		New:   func(cfg VariantConfig) (Variant, error) { return NewV8Pool(cfg.Workers), nil },
	})
	// v8-proc (process isolation, Order 20) is registered in procpool.go.
	RegisterVariant(VariantSpec{
		Name:  VariantV8Fresh,
		Order: 30,
		Label: "V8 with a fresh isolate per run (`v8sandbox.Options{RecycleAfter: 1}`)",
		New:   func(cfg VariantConfig) (Variant, error) { return NewV8Fresh(cfg.Workers), nil },
	})
	RegisterVariant(VariantSpec{
		Name:  VariantGojaSync,
		Order: 40,
		Label: "goja, fresh runtime per run, synchronous (blocking) tool bridge",
		New:   func(VariantConfig) (Variant, error) { return NewGojaSync(), nil },
	})
	RegisterVariant(VariantSpec{
		Name:  VariantGojaLoop,
		Order: 50,
		Label: "goja, fresh runtime per run on goja_nodejs' event loop, Promise tool bridge",
		New:   func(VariantConfig) (Variant, error) { return NewGojaLoop(), nil },
	})
}
