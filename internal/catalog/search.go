package catalog

import (
	"math"
	"slices"
	"strings"
)

// Indexed fields and their weights. A tool's BM25 term frequency is the
// weighted sum of the term's occurrences over the fields (a simplified
// BM25F), and its length the weighted sum of the fields' lengths.
const (
	fieldName        = iota // tool name split into words, e.g. get-sum → get, sum
	fieldBackend            // backend name
	fieldDesc               // title and description
	fieldParamName          // top-level parameter names
	fieldParamDesc          // top-level parameter descriptions
	fieldTags               // backend and tool tags
	fieldBackendDesc        // the backend's description (backends.<name>.description)
	numFields
)

var fieldWeights = [numFields]float32{
	fieldName:      3,
	fieldBackend:   1,
	fieldDesc:      1,
	fieldParamName: 1.5,
	fieldParamDesc: 0.5,
	fieldTags:      1,
	// Half a backend name's: it tells twin backends apart without
	// outweighing what the tools themselves say.
	fieldBackendDesc: 0.5,
}

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// correctedWeight scales the contribution of fuzzily corrected terms
	// so that exact matches of other terms rank first.
	correctedWeight = 0.8
)

// Search limits.
const (
	// DefaultSearchLimit is the number of hits returned when
	// SearchOptions.Limit is zero or negative.
	DefaultSearchLimit = 10
	// MaxSearchLimit caps SearchOptions.Limit.
	MaxSearchLimit = 100
)

// SearchOptions tunes [Catalog.Search].
type SearchOptions struct {
	// Limit is the maximum number of hits (default DefaultSearchLimit,
	// capped at MaxSearchLimit).
	Limit int
	// Tag, if set, restricts the search to tools that carry the tag
	// themselves or through their backend (case-insensitive).
	Tag string
	// Brief omits Tags from hits; every hit keeps its name, summary,
	// signature and ready-to-paste call.
	Brief bool
}

// SearchResult is the outcome of [Catalog.Search].
type SearchResult struct {
	// Query is the query as given.
	Query string `json:"query"`
	// Tag is the tag filter applied, if any.
	Tag string `json:"tag,omitempty"`
	// Total is the number of matching tools before Limit was applied.
	Total int `json:"total"`
	// Hits are the best matches, best first (ties by name).
	Hits []Hit `json:"hits"`
	// Corrections lists misspelt query words and what they were read as.
	Corrections []Correction `json:"corrections,omitempty"`
	// Unmatched lists query words that matched no tool, even after
	// correction (within the tag filter, if any).
	Unmatched []string `json:"unmatched,omitempty"`
	// Brief records SearchOptions.Brief, for rendering.
	Brief bool `json:"-"`
}

// Correction records one fuzzy correction of a query word.
type Correction struct {
	// From is the query word as typed (lower-cased).
	From string `json:"from"`
	// To is the catalogue word it was corrected to.
	To string `json:"to"`
}

// Hit is one search result.
type Hit struct {
	// Name is "backend.tool"; pass it to Info or Lookup.
	Name string `json:"name"`
	// Backend is the backend's name.
	Backend string `json:"backend"`
	// Tool is the tool's name within the backend.
	Tool string `json:"tool"`
	// Summary is the first sentence of the tool's description.
	Summary string `json:"summary,omitempty"`
	// BackendDescription is the backend's description, "" when it has
	// none: what tells two backends with the same tools apart.
	BackendDescription string `json:"backendDescription,omitempty"`
	// Signature is the tool's TypeScript signature line, e.g.
	// `everything.get_sum(args: { a: number; b: number }): Promise<unknown>`.
	Signature string `json:"signature,omitempty"`
	// Example is a ready-to-paste call_tool_chain statement with
	// placeholder values for the required parameters.
	Example string `json:"example,omitempty"`
	// Score is the BM25 relevance; 0 when listing for an empty query.
	Score float64 `json:"score"`
	// Tags are the tool's tags (omitted when Brief).
	Tags []string `json:"tags,omitempty"`
}

// posting is one document containing a term, with its weighted frequency.
type posting struct {
	doc int32
	tf  float32
}

// index is an inverted BM25 index over a snapshot's entries.
type index struct {
	terms      map[string]int32 // stem → term id
	vocab      []string         // term id → stem
	vocabRunes [][]rune         // term id → stem as runes, for fuzzy matching
	surface    []string         // term id → shortest surface word seen
	postings   [][]posting      // term id → documents in ascending order
	docLen     []float32        // weighted document length
	avgLen     float64
	norm       []float64         // per document: k1 * (1 - b + b*docLen/avgLen)
	tagMask    map[string][]bool // lower-cased tag → documents carrying it
}

// buildIndex indexes entries (document id = position in entries).
func buildIndex(entries []*Entry) *index {
	ix := &index{
		terms:   map[string]int32{},
		docLen:  make([]float32, len(entries)),
		tagMask: map[string][]bool{},
	}
	tf := map[int32]float32{}
	var total float64
	for doc, e := range entries {
		clear(tf)
		var length float32
		for f, toks := range e.td.fieldToks {
			w := fieldWeights[f]
			for _, t := range toks {
				id, ok := ix.terms[t.stem]
				if !ok {
					id = int32(len(ix.vocab))
					ix.terms[t.stem] = id
					ix.vocab = append(ix.vocab, t.stem)
					ix.vocabRunes = append(ix.vocabRunes, []rune(t.stem))
					ix.surface = append(ix.surface, t.word)
					ix.postings = append(ix.postings, nil)
				} else if s := ix.surface[id]; len(t.word) < len(s) || (len(t.word) == len(s) && t.word < s) {
					ix.surface[id] = t.word
				}
				tf[id] += w
				length += w
			}
		}
		for id, f := range tf {
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(doc), tf: f})
		}
		ix.docLen[doc] = length
		total += float64(length)
		for _, tag := range e.Tags {
			k := strings.ToLower(tag)
			m := ix.tagMask[k]
			if m == nil {
				m = make([]bool, len(entries))
				ix.tagMask[k] = m
			}
			m[doc] = true
		}
	}
	if len(entries) > 0 {
		ix.avgLen = total / float64(len(entries))
	}
	if ix.avgLen == 0 {
		ix.avgLen = 1
	}
	ix.norm = make([]float64, len(entries))
	for doc, l := range ix.docLen {
		ix.norm[doc] = bm25K1 * (1 - bm25B + bm25B*float64(l)/ix.avgLen)
	}
	return ix
}

// idf is the BM25 inverse document frequency (Lucene's non-negative form).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Search ranks tools against a free-text query with BM25 (k1=1.2, b=0.75)
// over the weighted fields tool name (×3), backend name, title and
// description, parameter names (×1.5), parameter descriptions (×0.5),
// tags and the backend's description (×0.5). Query words are tokenized like the documents (lower-cased, split on
// punctuation and camelCase, stopwords dropped, crudely stemmed); a word
// absent from the catalogue is corrected to the nearest catalogue word (see
// [SearchResult.Corrections]) and reported in Unmatched if none is close.
// Words are OR-ed: a tool matching more of them scores higher.
//
// An empty (or all-whitespace) query is not an error: it lists the tools in
// name order, honouring Tag and Limit, with Total counting all of them; use
// [Catalog.List] to page through everything.
func (c *Catalog) Search(query string, opts SearchOptions) SearchResult {
	s := c.snap.Load()
	ix := s.index()
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	res := SearchResult{Query: query, Tag: opts.Tag, Brief: opts.Brief, Hits: []Hit{}}

	var allowed []bool // nil: every document
	if opts.Tag != "" {
		allowed = ix.tagMask[strings.ToLower(strings.TrimSpace(opts.Tag))]
		if allowed == nil {
			allowed = make([]bool, len(s.entries))
		}
	}
	ok := func(doc int32) bool { return allowed == nil || allowed[doc] }

	if strings.TrimSpace(query) == "" {
		for doc, e := range s.entries {
			if !ok(int32(doc)) {
				continue
			}
			if res.Total++; len(res.Hits) < limit {
				res.Hits = append(res.Hits, makeHit(e, 0, opts.Brief))
			}
		}
		return res
	}

	toks := tokenize(query, nil)
	if len(toks) == 0 { // only stopwords or punctuation
		res.Unmatched = strings.Fields(strings.ToLower(query))
		return res
	}
	n := len(s.entries)
	scores := make([]float64, n)
	seen := make(map[string]bool, len(toks))
	for _, t := range toks {
		if seen[t.stem] {
			continue
		}
		seen[t.stem] = true
		id, found := ix.terms[t.stem]
		weight := 1.0
		if !found {
			if id, found = ix.correct(t.stem); !found {
				res.Unmatched = append(res.Unmatched, t.word)
				continue
			}
			res.Corrections = append(res.Corrections, Correction{From: t.word, To: ix.surface[id]})
			weight = correctedWeight
		}
		plist := ix.postings[id]
		w := weight * idf(n, len(plist))
		matched := false
		for _, p := range plist {
			if !ok(p.doc) {
				continue
			}
			matched = true
			tf := float64(p.tf)
			scores[p.doc] += w * tf * (bm25K1 + 1) / (tf + ix.norm[p.doc])
		}
		if !matched {
			res.Unmatched = append(res.Unmatched, t.word)
		}
	}

	top := make([]int32, 0, limit+1)
	better := func(a, b int32) bool { // a ranks before b
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return s.entries[a].Name < s.entries[b].Name
	}
	for doc, sc := range scores {
		if sc <= 0 {
			continue
		}
		res.Total++
		d := int32(doc)
		if len(top) == limit && !better(d, top[len(top)-1]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, d, func(x, y int32) int {
			if better(x, y) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, i, d)
		if len(top) > limit {
			top = top[:limit]
		}
	}
	for _, d := range top {
		res.Hits = append(res.Hits, makeHit(s.entries[d], math.Round(scores[d]*1000)/1000, opts.Brief))
	}
	return res
}

// makeHit renders an entry as a search hit.
func makeHit(e *Entry, score float64, brief bool) Hit {
	h := Hit{Name: e.Name, Backend: e.Backend, Tool: e.Tool, Summary: e.Summary, BackendDescription: e.BackendDescription,
		Signature: e.Signature(), Score: score}
	h.Example = e.Example() // the ready-to-paste call, brief or not
	if !brief {
		h.Tags = slices.Clone(e.Tags)
	}
	return h
}
