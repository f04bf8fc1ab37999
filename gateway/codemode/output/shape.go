// Package output shapes the final result of a code-mode program before it is
// returned to an agent as text.
//
// Shape runs these stages in order, each switchable by Options:
//
//  1. intent filter: keep only the sections that match the agent's stated
//     intent (paragraphs, lines, or the items of a JSON array);
//  2. JSON auto-chunk: replace a large JSON result by a summary and keep the
//     full result in a Store, readable as isogate://result/<id>[/<path>];
//  3. truncate: keep the head and tail of an over-long text with one marker
//     in the middle;
//  4. footer: say how much was returned out of how much was processed.
//
// The package is pure Go and knows nothing about MCP; the gateway serves the
// Store's contents as resources (see ResultURI and ParseResultURI).
package output

import (
	"fmt"
	"math"
	"strings"
)

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
	// least 30 % of the intent's terms: lowercased words without stop words.
	// Sections are the items of the JSON result's main array (a top-level
	// array, or the array that makes up most of an object, e.g. under
	// "results" or "data" > "items"; the envelope is kept and the result is
	// re-emitted pretty-printed), else blank-line separated paragraphs, else
	// lines. A first line notes what was kept, or that nothing matched (the
	// output is then kept whole). JSON without a main array is not filtered.
	IntentFilter   bool
	IntentMinBytes int

	// AutoChunk enables summarising JSON output (an object or array) longer
	// than ChunkThreshold bytes: a uniform array (of objects sharing most
	// keys, or of scalars), at the top or as the main array of an object,
	// becomes a count, its keys, the first ChunkPreviewItems items and the
	// identities (id, name, title, slug, key or label) of the rest; any
	// other JSON becomes a depth-limited list of key paths with types and
	// sizes. The raw output is stored in the Store and the summary ends
	// with its isogate://result/<id> URI. It needs a non-nil Store (the full
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

	// Owner is the Store owner (e.g. the session) full results are stored
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
	// StoredID is the Store id of the full result when it was stored.
	StoredID string
}

// Shape runs raw, the program's final result as text, through the enabled
// stages: intent filter, JSON auto-chunk, truncate, footer. intent is the
// agent's stated purpose ("" disables the filter); store keeps full results
// of summarised JSON and may be nil, which disables auto-chunking.
//
// A note from the intent filter, if any, becomes the first line of the text.
// When both Truncate and Footer are on, the footer fits within
// MaxOutputSize too.
func Shape(raw string, intent string, opts Options, store *Store) Result {
	o := opts.withDefaults()
	res := Result{ProcessedBytes: len(raw)}

	body, note := raw, ""
	var doc *jval // parsed body, when the filter already parsed it
	if o.IntentFilter && strings.TrimSpace(intent) != "" && len(raw) > o.IntentMinBytes {
		f := filterIntent(raw, intent)
		body, note, doc, res.Filtered = f.text, f.note, f.doc, f.filtered
	}

	if o.AutoChunk && store != nil && len(body) > o.ChunkThreshold {
		if doc == nil {
			doc, _ = parseJSON(body)
		}
		if doc != nil {
			if sum, id, ok := summarizeJSON(doc, len(body), raw, res.Filtered, o, store); ok {
				body, res.StoredID, res.Chunked = sum, id, true
			}
		}
	}

	text := body
	if note != "" {
		text = note + "\n" + body
	}
	if o.Truncate {
		text, res.Truncated = fitOutput(text, len(raw), o)
	}
	if o.Footer {
		text = appendFooter(text, len(raw))
	}
	res.Text = text
	res.ReturnedBytes = len(text)
	return res
}

// fitOutput truncates text so that it, plus the footer when one will be
// added, fits in o.MaxOutputSize.
func fitOutput(text string, processed int, o Options) (string, bool) {
	limit := o.MaxOutputSize
	footer := 0
	if o.Footer && processed-len(text) > FooterMinRemoved {
		footer = len(footerFor(len(text), processed))
	}
	if len(text)+footer <= limit {
		return text, false
	}
	if o.Footer {
		// The returned size in the footer is at most limit and the
		// percentage at most 100, so this is the longest footer possible.
		limit -= len(formatFooter(limit, processed, 100))
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
