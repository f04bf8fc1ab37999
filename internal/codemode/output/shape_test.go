package output

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/isogate/isogate/internal/resultstore"
)

var footerRE = regexp.MustCompile(`\n\[Output: (\d+\.\d)KB returned, (\d+\.\d)KB processed, (\d+)% reduced\]$`)

// checkFooter asserts that res ends in a footer that describes it.
func checkFooter(t *testing.T, res Result) {
	t.Helper()
	m := footerRE.FindStringSubmatch(res.Text)
	if m == nil {
		t.Fatalf("no footer at the end of %q", res.Text[max(0, len(res.Text)-120):])
	}
	if want := fmt.Sprintf("%.1f", float64(len(res.Text))/1024); m[1] != want {
		t.Errorf("footer says %sKB returned, text is %d bytes (%s)", m[1], len(res.Text), want)
	}
	if want := fmt.Sprintf("%.1f", float64(res.ProcessedBytes)/1024); m[2] != want {
		t.Errorf("footer says %sKB processed, want %s", m[2], want)
	}
	pct := math.Round(100 * float64(res.ProcessedBytes-len(res.Text)) / float64(res.ProcessedBytes))
	if m[3] != fmt.Sprint(pct) {
		t.Errorf("footer says %s%% reduced, want %v", m[3], pct)
	}
}

func TestFooterFormat(t *testing.T) {
	if got, want := formatFooter(2048, 10240, 80), "\n[Output: 2.0KB returned, 10.0KB processed, 80% reduced]"; got != want {
		t.Fatalf("formatFooter = %q, want %q", got, want)
	}
	text := strings.Repeat("k", 1000)
	got := appendFooter(text, 100_000)
	if want := text + "\n[Output: 1.0KB returned, 97.7KB processed, 99% reduced]"; got != want {
		t.Fatalf("appendFooter = %q", got[1000:])
	}
	checkFooter(t, Result{Text: got, ProcessedBytes: 100_000})
}

func TestFooterThreshold(t *testing.T) {
	text := strings.Repeat("k", 500)
	if got := appendFooter(text, 700); got != text {
		t.Errorf("footer added with exactly 200 bytes removed")
	}
	if got := appendFooter(text, 701); !footerRE.MatchString(got) {
		t.Errorf("no footer with 201 bytes removed")
	}
	if got := appendFooter(text, 100); got != text {
		t.Errorf("footer added when the output grew")
	}

	// Through the pipeline: the intent filter drops one paragraph, sized so
	// that exactly 200 / 201 bytes are removed overall.
	note := `[intent filter: kept 1 of 2 sections matching "alpha"]`
	keep := "alpha section"
	for _, removed := range []int{200, 201} {
		drop := strings.Repeat("x", removed-1+len(note))
		raw := keep + "\n\n" + drop
		res := Shape(ctx, raw, "alpha", Options{IntentFilter: true, IntentMinBytes: 10, Footer: true}, nil)
		if body := note + "\n" + keep; !strings.HasPrefix(res.Text, body) || len(raw)-len(body) != removed {
			t.Fatalf("setup: removed %d, text %q", len(raw)-len(body), res.Text)
		}
		if hasFooter := footerRE.MatchString(res.Text); hasFooter != (removed > 200) {
			t.Errorf("%d bytes removed: footer %v", removed, hasFooter)
		}
	}
}

func TestShapeNothingToDo(t *testing.T) {
	raw := "hello\n\nworld"
	for _, o := range []Options{{}, DefaultOptions()} {
		res := Shape(ctx, raw, "world", o, newStore(1<<20))
		want := Result{Text: raw, ReturnedBytes: len(raw), ProcessedBytes: len(raw)}
		if res != want {
			t.Errorf("Shape(ctx, %+v) = %+v, want %+v", o, res, want)
		}
	}
}

func TestShapeZeroOptionsPassThrough(t *testing.T) {
	raw := jsonArray(2000, issue) // ~650KB: every stage would act
	res := Shape(ctx, raw, "closed", Options{}, newStore(1<<30))
	if res.Text != raw || res.Filtered || res.Chunked || res.Truncated {
		t.Fatalf("zero Options changed the output: %+v", res)
	}
}

func TestShapeWholePipelineJSON(t *testing.T) {
	raw := `{"results":{"items":` + jsonArray(100, issue) + `,"total":100}}`
	store := newStore(1 << 20)
	o := DefaultOptions()
	o.Owner = "s1"
	res := Shape(ctx, raw, "closed", o, store)
	if !res.Filtered || !res.Chunked || res.Truncated || res.StoredID == "" {
		t.Fatalf("flags: %+v", res)
	}
	if res.ProcessedBytes != len(raw) || res.ReturnedBytes != len(res.Text) {
		t.Fatalf("byte counts %d/%d for %d/%d", res.ReturnedBytes, res.ProcessedBytes, len(res.Text), len(raw))
	}
	lines := strings.Split(res.Text, "\n")
	if lines[0] != `[intent filter: kept 50 of 100 items matching "closed"]` {
		t.Fatalf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "[JSON summary (") || !strings.HasSuffix(lines[1], "): array of 50 objects at results > items]") {
		t.Fatalf("second line %q", lines[1])
	}
	if !strings.Contains(res.Text, "\nRemaining 45 items (id): 11, 13, 15,") {
		t.Fatalf("identities of the filtered items missing:\n%s", res.Text)
	}
	if !strings.Contains(res.Text, "\n"+fetchLine(res.StoredID, "results/items/5")+"\n(The stored result is the complete output from before the intent filter; paths address it.)\n") {
		t.Fatalf("fetch lines missing:\n%s", res.Text)
	}
	checkFooter(t, res)
	// The stored result is the unfiltered original.
	if part, err := getPath(store, "s1", res.StoredID, "results/items/0/state"); err != nil || part != `"open"` {
		t.Fatalf("GetPath = %q, %v", part, err)
	}
}

func TestShapeWholePipelineText(t *testing.T) {
	raw := numberedLines(20000, "log line %06d: request served in 12ms") // ~780KB
	store := newStore(1 << 20)
	res := Shape(ctx, raw, "", DefaultOptions(), store)
	if !res.Truncated || res.Chunked || res.Filtered {
		t.Fatalf("flags: %+v", res)
	}
	if len(res.Text) > DefaultMaxOutputSize || len(res.Text) < DefaultMaxOutputSize-200 {
		t.Fatalf("len %d, want just under %d", len(res.Text), DefaultMaxOutputSize)
	}
	if n := len(regexp.MustCompile(`(?m)^\.\.\. \[\d+ lines / \d+\.\dKB truncated — showing first \d+ \+ last \d+ lines\] \.\.\.$`).FindAllString(res.Text, -1)); n != 1 {
		t.Fatalf("%d line markers, want 1", n)
	}
	if !strings.HasPrefix(res.Text, "log line 000000:") {
		t.Fatalf("head missing")
	}
	body := footerRE.ReplaceAllString(res.Text, "")
	ref := fmt.Sprintf("\n[full output (%s): %s; read it as a resource or with read_result {\"uri\": \"%s\", \"offset\": 0, \"limit\": 20000}]",
		fmtKB(len(raw)), resultstore.URI(res.StoredID, ""), resultstore.URI(res.StoredID, ""))
	if !strings.HasSuffix(body, "log line 019999: request served in 12ms\n"+ref) {
		t.Fatalf("tail or reference missing: %q", body[len(body)-300:])
	}
	if got, err := store.Get(ctx, "", res.StoredID); err != nil || string(got) != raw {
		t.Fatalf("the truncated output is not kept whole: %v", err)
	}
	checkFooter(t, res)
}

func TestShapeTruncateBudgetIncludesFooter(t *testing.T) {
	raw := strings.Repeat("0123456789abcdef", 1000)
	for _, max := range []int{150, 200, 500, 1000, 4000} {
		res := Shape(ctx, raw, "", Options{Truncate: true, MaxOutputSize: max, Footer: true}, nil)
		if len(res.Text) > max || !res.Truncated {
			t.Errorf("max %d: len %d truncated %v", max, len(res.Text), res.Truncated)
		}
		checkFooter(t, res)
	}
	// Text that fits on its own, but not with the footer it needs.
	note := `[intent filter: kept 1 of 2 sections matching "alpha"]`
	text := note + "\nalpha " + strings.Repeat("a", 300)
	raw = "alpha " + strings.Repeat("a", 300) + "\n\n" + strings.Repeat("z", 5000)
	o := Options{IntentFilter: true, IntentMinBytes: 10, Truncate: true, MaxOutputSize: len(text) + 10, Footer: true}
	res := Shape(ctx, raw, "alpha", o, nil)
	if len(res.Text) > o.MaxOutputSize || !res.Truncated {
		t.Fatalf("len %d > %d (truncated %v)", len(res.Text), o.MaxOutputSize, res.Truncated)
	}
	checkFooter(t, res)
	// With room for both, nothing is cut.
	o.MaxOutputSize = len(text) + 100
	if res := Shape(ctx, raw, "alpha", o, nil); res.Truncated || !strings.HasPrefix(res.Text, text+"\n[Output: ") {
		t.Fatalf("cut although text and footer fit: %q", res.Text)
	}
}

func TestShapeAbsurdMaxOutputSize(t *testing.T) {
	raw := strings.Repeat("q", 3000)
	res := Shape(ctx, raw, "", Options{Truncate: true, MaxOutputSize: 5}, nil)
	if res.Text != "... [truncated middle — 2.9KB omitted] ..." || !res.Truncated {
		t.Fatalf("got %q", res.Text)
	}
}

func TestShapeStagesDisabled(t *testing.T) {
	paras := strings.Join(paragraphs(400, map[int]string{7: "open bug"}), "\n\n") // ~45KB text
	bigJSON := `{"results":{"items":` + jsonArray(100, issue) + `}}`              // ~33KB JSON
	longText := numberedLines(10000, "line %05d of a long output")                // ~270KB

	t.Run("intent filter off", func(t *testing.T) {
		o := DefaultOptions()
		o.IntentFilter = false
		res := Shape(ctx, paras, "open bug", o, nil)
		if res.Filtered || res.Text != paras {
			t.Fatalf("filtered anyway")
		}
		o.IntentFilter = true
		if res := Shape(ctx, paras, "open bug", o, nil); !res.Filtered {
			t.Fatalf("control: not filtered when on")
		}
	})
	t.Run("auto-chunk off", func(t *testing.T) {
		o := DefaultOptions()
		o.AutoChunk = false
		store := newStore(1 << 20)
		res := Shape(ctx, bigJSON, "", o, store)
		if res.Chunked || res.Text != bigJSON || store.Len() != 0 {
			t.Fatalf("chunked anyway")
		}
		o.AutoChunk = true
		if res := Shape(ctx, bigJSON, "", o, store); !res.Chunked {
			t.Fatalf("control: not chunked when on")
		}
	})
	t.Run("truncate off", func(t *testing.T) {
		o := DefaultOptions()
		o.Truncate = false
		res := Shape(ctx, longText, "", o, nil)
		if res.Truncated || res.Text != longText {
			t.Fatalf("truncated anyway")
		}
		o.Truncate = true
		if res := Shape(ctx, longText, "", o, nil); !res.Truncated {
			t.Fatalf("control: not truncated when on")
		}
	})
	t.Run("footer off", func(t *testing.T) {
		o := DefaultOptions()
		o.Footer = false
		res := Shape(ctx, longText, "", o, nil)
		if strings.Contains(res.Text, "[Output:") || !res.Truncated {
			t.Fatalf("footer present (or not truncated)")
		}
		if len(res.Text) > DefaultMaxOutputSize || len(res.Text) < DefaultMaxOutputSize-100 {
			t.Fatalf("without a footer the whole budget goes to the text: len %d", len(res.Text))
		}
	})
}

func TestShapeDefaultsForZeroSizes(t *testing.T) {
	// Zero sizes mean the defaults, not "zero bytes".
	long := strings.Repeat("y", DefaultMaxOutputSize+1)
	if res := Shape(ctx, long, "", Options{Truncate: true}, nil); !res.Truncated || len(res.Text) > DefaultMaxOutputSize {
		t.Errorf("Truncate with zero MaxOutputSize: truncated %v len %d", res.Truncated, len(res.Text))
	}
	exact := strings.Repeat("y", DefaultMaxOutputSize)
	if res := Shape(ctx, exact, "", Options{Truncate: true}, nil); res.Truncated {
		t.Errorf("text of exactly MaxOutputSize truncated")
	}
	store := newStore(1 << 20)
	small := jsonArray(34, issue) // just under 10240 bytes
	big := jsonArray(35, issue)   // just over
	if len(small) > DefaultChunkThreshold || len(big) <= DefaultChunkThreshold {
		t.Fatalf("setup: sizes %d, %d around %d", len(small), len(big), DefaultChunkThreshold)
	}
	if res := Shape(ctx, small, "", Options{AutoChunk: true}, store); res.Chunked {
		t.Errorf("JSON under the default threshold chunked")
	}
	res := Shape(ctx, big, "", Options{AutoChunk: true}, store)
	if !res.Chunked || !strings.Contains(res.Text, "\nFirst 5 items:\n") {
		t.Errorf("JSON over the default threshold not chunked with 5 preview items")
	}
}

// Every reduced output names a URI under which the whole output is kept:
// a truncated string, a text and a string cut by the intent filter.
func TestShapeCutOutputsStayReachable(t *testing.T) {
	logText := numberedLines(400, "line %03d: ok") + "line 400: ERROR disk full\n" + numberedLines(400, "tail %03d: ok")
	cases := []struct {
		name, raw, intent string
		opts              Options
		filtered          bool
	}{
		{"truncated string", jsonString(strings.Repeat("x", 5000)), "", Options{Truncate: true, MaxOutputSize: 1000, Footer: true}, false},
		{"filtered text", logText, "disk error", DefaultOptions(), true},
		{"filtered string", jsonString(logText), "disk error", DefaultOptions(), true},
	}
	uriRE := regexp.MustCompile(`isogate://result/([0-9a-f]{32})`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := newStore(1 << 20)
			res := Shape(ctx, c.raw, c.intent, c.opts, store)
			if res.Filtered != c.filtered || len(res.Text) >= len(c.raw) {
				t.Fatalf("not reduced as expected: %+v", res)
			}
			if c.opts.Truncate && c.opts.MaxOutputSize > 0 && len(res.Text) > c.opts.MaxOutputSize {
				t.Fatalf("%d bytes over max_output_size %d", len(res.Text), c.opts.MaxOutputSize)
			}
			m := uriRE.FindStringSubmatch(res.Text)
			if m == nil || m[1] != res.StoredID {
				t.Fatalf("no result URI for the stored output in %q", res.Text)
			}
			if got, err := store.Get(ctx, "", m[1]); err != nil || string(got) != c.raw {
				t.Fatalf("stored output differs from the raw output: %v", err)
			}
			if c.filtered && !strings.Contains(res.Text, "ERROR disk full") {
				t.Fatalf("matching line dropped: %q", res.Text)
			}
			if c.filtered && strings.Contains(res.Text, "tail 005") {
				t.Fatalf("non-matching lines kept")
			}
		})
	}
}

// With a tiny output budget the reference is short and still fits.
func TestShapeReferenceFitsSmallBudget(t *testing.T) {
	store := newStore(1 << 20)
	res := Shape(ctx, jsonString(strings.Repeat("y", 1e5)), "", Options{Truncate: true, MaxOutputSize: 300, Footer: true}, store)
	if len(res.Text) > 300 || !strings.Contains(res.Text, "[full output: isogate://result/"+res.StoredID+"]") {
		t.Fatalf("%d bytes: %q", len(res.Text), res.Text)
	}
}
