// Package output shapes the final result of a code-mode program before it is
// returned to an agent as text.
//
// Shape runs these stages in order, each switchable by Options:
//
//  1. intent filter: keep only the sections that match the agent's stated
//     intent (paragraphs, lines, or the items of a JSON array);
//  2. JSON auto-chunk: replace a large JSON result by a summary and keep the
//     full result in a resultstore.Store, readable as
//     isogate://result/<id>[/<path>];
//  3. truncate: keep the head and tail of an over-long text with one marker
//     in the middle;
//  4. footer: say how much was returned out of how much was processed.
//
// Every output a stage reduced is kept whole in the store and the text names
// its URI. The package is pure Go and knows nothing about MCP; the gateway
// serves the store's contents as resources and through read_result.
package output

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/isogate/isogate/internal/resultstore"
)

// minLongReferenceBudget is the smallest MaxOutputSize for which the
// reference to a kept output shows the whole read_result call.
const minLongReferenceBudget = 2000

// Defaults applied by Shape to non-positive numeric Options fields, and the
// footer threshold.
const (
	DefaultIntentMinBytes    = 5000
	DefaultChunkThreshold    = 10240
	DefaultChunkPreviewItems = 5
	DefaultMaxOutputSize     = 200000
	// FooterMinRemoved is the number of bytes that must have been removed
	// overall (strictly more) for the footer to be added.
	FooterMinRemoved = 200
)

// Options switches and tunes the stages of Shape. The zero value turns every
// stage off; DefaultOptions turns them all on. Non-positive sizes and counts
// mean "use the default".
type Options struct {
	// IntentFilter enables the intent filter. It runs when the intent is
	// non-empty and the raw output is longer than IntentMinBytes, and keeps
	// the sections that contain (case-insensitively, as substrings) at
	// least 30 % of the intent's terms: lowercased words without stop words,
	// and each key=value (or key:value) pair of the intent exactly (key,
	// separator, value: owner=dee matches "owner": "dee", not owner=bo).
	// Sections are the items of the JSON result's main array (a top-level
	// array, or the array that makes up most of an object, e.g. under
	// "results" or "data" > "items"; the envelope is kept and the result is
	// re-emitted pretty-printed), else blank-line separated paragraphs, else
	// lines. A first line notes what was kept, or that nothing matched (the
	// output is then kept whole), and what a section needed when the match
	// is approximate (fewer than all of the terms). JSON without a main array is not filtered.
	IntentFilter   bool
	IntentMinBytes int

	// AutoChunk enables summarising JSON output (an object or array) longer
	// than ChunkThreshold bytes: a uniform array (of objects sharing most
	// keys, or of scalars), at the top or as the main array of an object,
	// becomes a count, its keys, the first ChunkPreviewItems items and the
	// identities (id, name, title, slug, key or label) of the rest; any
	// other JSON becomes a depth-limited list of key paths with types and
	// sizes. The raw output is stored in the store and the summary ends
	// with its isogate://result/<id> URI. It needs a non-nil store (the full
	// result must stay reachable) and is skipped without one, and when the
	// summary would not be shorter than the output.
	AutoChunk         bool
	ChunkThreshold    int
	ChunkPreviewItems int

	// Truncate enables cutting text longer than MaxOutputSize bytes to a
	// head (60 %) and a tail (40 %) around one marker, on line boundaries
	// when the text has usable ones, never inside a UTF-8 character. The
	// marker, and the footer when enabled, count toward MaxOutputSize. If
	// MaxOutputSize cannot hold even the marker (tens of bytes), the text
	// becomes the bare marker, which may exceed it.
	Truncate      bool
	MaxOutputSize int

	// Footer enables the size footer
	// "\n[Output: X.XKB returned, Y.YKB processed, N% reduced]", added when
	// more than FooterMinRemoved bytes were removed overall. The returned
	// size includes the footer itself.
	Footer bool

	// ValidJSON says that the output, when it is a JSON object or array,
	// is valid JSON nested less deep than encoding/json allows (the caller
	// rendered it from a checked value), so it is not checked again.
	ValidJSON bool

	// Compact, when set, is the output's value as compact JSON, of which
	// the output is the pretty-printed rendering (the caller rendered it
	// and sets ValidJSON). The stages build their JSON tree from Compact:
	// the same tree, from about two thirds of the bytes. Empty: the output
	// itself is parsed.
	Compact string

	// Owner is the store owner (e.g. the session) full results are stored
	// under; only the same owner can read them back.
	Owner string
}

// DefaultOptions returns Options with every stage enabled and the default
// sizes filled in.
func DefaultOptions() Options {
	return Options{
		IntentFilter:      true,
		IntentMinBytes:    DefaultIntentMinBytes,
		AutoChunk:         true,
		ChunkThreshold:    DefaultChunkThreshold,
		ChunkPreviewItems: DefaultChunkPreviewItems,
		Truncate:          true,
		MaxOutputSize:     DefaultMaxOutputSize,
		Footer:            true,
	}
}

// withDefaults fills in non-positive numeric fields.
func (o Options) withDefaults() Options {
	if o.IntentMinBytes <= 0 {
		o.IntentMinBytes = DefaultIntentMinBytes
	}
	if o.ChunkThreshold <= 0 {
		o.ChunkThreshold = DefaultChunkThreshold
	}
	if o.ChunkPreviewItems <= 0 {
		o.ChunkPreviewItems = DefaultChunkPreviewItems
	}
	if o.MaxOutputSize <= 0 {
		o.MaxOutputSize = DefaultMaxOutputSize
	}
	return o
}

// Result is the shaped output and what happened to it.
type Result struct {
	// Text is what the agent receives.
	Text string
	// ReturnedBytes is len(Text); ProcessedBytes is len(raw). Both feed
	// usage statistics.
	ReturnedBytes, ProcessedBytes int
	// Truncated, Chunked and Filtered report which stages changed the text.
	// Chunked is also true when the full result could not be stored.
	Truncated, Chunked, Filtered bool
	// StoredID is the store id of the full output when it was stored.
	StoredID string
	// Note is the intent filter's note, which is also Text's first line;
	// "" when there is none.
	Note string
}

// keeper stores the raw output at most once, when a stage first needs it.
type keeper struct {
	ctx   context.Context
	store resultstore.Store
	owner string
	raw   string

	id   string
	err  error
	done bool
}

// keep stores the raw output (once) and returns its id.
func (k *keeper) keep() (string, error) {
	if !k.done {
		k.done = true
		if k.store == nil {
			k.err = errors.New("no result store is configured")
		} else {
			// Put never writes to what it is given: the output's bytes are
			// passed in place, not copied first.
			k.id, k.err = k.store.Put(k.ctx, k.owner, unsafe.Slice(unsafe.StringData(k.raw), len(k.raw)))
		}
	}
	return k.id, k.err
}

// reference says where the full output is, or why it was not kept: a long
// form that shows the read_result call, or a short one for small output
// budgets. It is "" when no store is configured.
func (k *keeper) reference(long bool) string {
	if k.store == nil {
		return ""
	}
	id, err := k.keep()
	if err != nil {
		return fmt.Sprintf("full output (%s) not kept: %v", fmtKB(len(k.raw)), err)
	}
	uri := resultstore.URI(id, "")
	if !long {
		return "full output: " + uri
	}
	return fmt.Sprintf("full output (%s): %s; read it as a resource or with read_result {\"uri\": \"%s\", \"offset\": 0, \"limit\": 20000}",
		fmtKB(len(k.raw)), uri, uri)
}

// Shape runs raw, the program's final result as text, through the enabled
// stages: intent filter, JSON auto-chunk, truncate, footer. intent is the
// agent's stated purpose ("" disables the filter); store keeps the full
// output of every output a stage reduced, under opts.Owner, and may be nil
// (auto-chunking is then off, and a reduced output says it was not kept).
//
// Whenever a stage removed something, the text names the full output's
// isogate://result/{id} URI (the chunk summary does so itself; otherwise a
// reference line is added before the footer). A note from the intent
// filter, if any, becomes the first line. When Truncate is on, the
// reference line and the footer fit within MaxOutputSize too.
func Shape(ctx context.Context, raw string, intent string, opts Options, store resultstore.Store) Result {
	o := opts.withDefaults()
	res := Result{ProcessedBytes: len(raw)}
	k := &keeper{ctx: ctx, store: store, owner: o.Owner, raw: raw}

	body, note := raw, ""
	var doc *jval // parsed body, when the filter already parsed it
	if o.IntentFilter && strings.TrimSpace(intent) != "" && len(raw) > o.IntentMinBytes {
		f := filterIntent(raw, intent, func() (*jval, bool) { return o.parseOutput(raw) })
		body, note, doc, res.Filtered = f.text, f.note, f.doc, f.filtered
	}

	if o.AutoChunk && store != nil && len(body) > o.ChunkThreshold {
		if doc == nil && res.Filtered {
			doc, _ = parseJSON(body, false)
		} else if doc == nil {
			doc, _ = o.parseOutput(body)
		}
		if doc != nil {
			if sum, ok := summarizeJSON(doc, len(body), res.Filtered, o, k); ok {
				body, res.Chunked = sum, true
			}
		}
	}

	// The reference goes into the filter's note (the body may be JSON) or,
	// for a truncated text, on a line of its own at the end.
	long := o.MaxOutputSize >= minLongReferenceBudget
	if res.Filtered && !res.Chunked {
		if ref := k.reference(long); ref != "" {
			note = strings.TrimSuffix(note, "]") + "; " + ref + "]"
		}
	}
	text := body
	if note != "" {
		text = note + "\n" + body
	}
	res.Note = note
	ref := ""
	if o.Truncate && !fits(text, len(raw), o) {
		if !res.Chunked && !res.Filtered {
			if ref = k.reference(long); ref != "" {
				ref = "\n[" + ref + "]"
			}
		}
		text, res.Truncated = fitOutput(text, len(raw), o, len(ref))
	}
	text += ref
	if o.Footer {
		text = appendFooter(text, len(raw))
	}
	res.Text = text
	res.ReturnedBytes = len(text)
	res.StoredID = k.id
	return res
}

// parseOutput parses raw, the output Shape was given: from o.Compact when
// the caller gave its compact form, else from raw itself.
func (o Options) parseOutput(raw string) (*jval, bool) {
	if o.Compact != "" && o.ValidJSON {
		return parseJSON(o.Compact, true)
	}
	return parseJSON(raw, o.ValidJSON)
}

// footerLen is the length of the footer that will be added to a text of n
// bytes (0 when none will be).
func footerLen(n, processed int, o Options) int {
	if !o.Footer || processed-n <= FooterMinRemoved {
		return 0
	}
	return len(footerFor(n, processed))
}

// fits reports whether text, plus the footer when one will be added, fits in
// o.MaxOutputSize.
func fits(text string, processed int, o Options) bool {
	return len(text)+footerLen(len(text), processed, o) <= o.MaxOutputSize
}

// fitOutput truncates text so that it, plus reserve bytes and the footer,
// fits in o.MaxOutputSize.
func fitOutput(text string, processed int, o Options, reserve int) (string, bool) {
	limit := o.MaxOutputSize - reserve
	if o.Footer {
		// The returned size in the footer is at most MaxOutputSize and the
		// percentage at most 100, so this is the longest footer possible.
		limit -= len(formatFooter(o.MaxOutputSize, processed, 100))
	}
	return truncateText(text, limit)
}

// appendFooter adds the size footer when more than FooterMinRemoved bytes of
// processed were removed to get text.
func appendFooter(text string, processed int) string {
	if processed-len(text) <= FooterMinRemoved {
		return text
	}
	return text + footerFor(len(text), processed)
}

// footerFor returns the footer for a text of n bytes. The returned size it
// reports includes the footer itself, found by iterating to a fixed point.
func footerFor(n, processed int) string {
	f := ""
	for range 4 {
		returned := n + len(f)
		g := formatFooter(returned, processed, percentReduced(returned, processed))
		if g == f {
			break
		}
		f = g
	}
	return f
}

func percentReduced(returned, processed int) int {
	if processed <= 0 {
		return 0
	}
	return int(math.Round(100 * float64(processed-returned) / float64(processed)))
}

func formatFooter(returned, processed, pct int) string {
	return fmt.Sprintf("\n[Output: %s returned, %s processed, %d%% reduced]",
		fmtKB(returned), fmtKB(processed), pct)
}
