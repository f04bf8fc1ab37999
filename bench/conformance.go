package bench

import (
	"context"
	"encoding/json"

	"github.com/isogate/isogate/bench/conformance"
)

// ConformanceRunner adapts a variant to [conformance.Runner]. With raw
// the engine parses each check's exact syntax; without it the check goes
// through the variant's esbuild step (TypeScript stripping and lowering to
// the variant's target), as code-mode programs do.
func ConformanceRunner(v Variant, raw bool) conformance.Runner {
	return func(ctx context.Context, body string) (json.RawMessage, error) {
		return v.Run(ctx, &Workload{Name: "conformance", Source: body, Raw: raw})
	}
}
