package output

import (
	"context"

	"github.com/isogate/isogate/internal/resultstore"
)

// MaxOutputSizeCap bounds every max_output_size, whoever sets it: the
// official TypeScript client drops the whole session when one message
// passes 10 MiB, so no response may come near that.
const MaxOutputSizeCap = 8 << 20

// Bound cuts text (an error message with its stack and hints, or console
// output) to at most limit bytes, keeping its head and tail around one
// marker, as Shape truncates results. The whole text is kept in store under
// owner and the cut text ends with its isogate://result/{id} URI. A text
// that fits is returned unchanged; store may be nil (then nothing is kept).
// When limit cannot hold even the marker the result is the bare marker and
// the reference, a few hundred bytes at most.
func Bound(ctx context.Context, text string, limit int, owner string, store resultstore.Store) string {
	limit = min(max(limit, 1), MaxOutputSizeCap)
	if len(text) <= limit {
		return text
	}
	k := &keeper{ctx: ctx, store: store, owner: owner, raw: text}
	ref := k.reference(limit >= minLongReferenceBudget)
	if ref != "" {
		ref = "\n[" + ref + "]"
	}
	cut, _ := truncateText(text, limit-len(ref))
	return cut + ref
}
