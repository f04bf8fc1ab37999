package catalog

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/isogate/isogate/internal/lexicon"
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
	fieldParamValues        // the string values top-level parameters may take (enum, const)
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
	// A parameter's allowed values are what the tool can do to its object:
	// update_issue's state "open, closed", a review's event "APPROVE,
	// REQUEST_CHANGES", a merge's method "squash".
	fieldParamValues: 1,
}

// BM25 parameters (measured on bench/searchbench: bench/RESULTS.md).
const (
	bm25K1 = 1.2
	// bm25B is the length normalisation, per field (BM25F).
	bm25B = 0.5
	// correctedWeight scales the contribution of fuzzily corrected terms
	// so that exact matches of other terms rank first.
	correctedWeight = 0.8
	// backendNamedFactor multiplies the score of a tool whose backend's
	// name is a query word.
	backendNamedFactor = 2
)

// conceptWeight scales a query word's match through a WordNet concept (a
// synonym or a hypernym: "user" for "person") below its exact match. A
// variable only so that the search benchmark can measure without it.
var conceptWeight = 0.5

// nearWeight scales a query word's match through FOLDOC's synonyms
// (lexicon.Near: "directory" for "folder") a little below a WordNet
// concept's. A variable only so that the search benchmark can measure
// without it.
var nearWeight = 0.4

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
	terms       map[string]int32  // stem → term id
	vocab       []string          // term id → stem
	vocabRunes  [][]rune          // term id → stem as runes, for fuzzy matching
	surface     []string          // term id → shortest surface word seen
	surfRunes   [][]rune          // term id → surface as runes, for fuzzy matching
	postings    [][]posting       // term id → documents in ascending order
	tagMask     map[string][]bool // lower-cased tag → documents carrying it
	backendOf   []int32           // document → backend number
	backendToks [][]token         // backend number → its name's tokens
	// own maps a WordNet concept (lexicon.Concepts) to the documents with
	// a word of that concept (a sense of the word), hyper to those with a
	// word of a kind of it (a sense's direct hypernym); frequencies are
	// weighted and summed over the document's words like a term's.
	own, hyper map[uint32][]posting
	// clipped maps a clipped word's term to the longer word it begins
	// ("repo" → "repository"), acronyms two initials to the adjacent
	// words they stand for ("pr" → "pull request"): [index.buildAbbrevs].
	clipped  map[int32]int32
	acronyms map[string][2]int32
	// nameForms maps a word as written (lower-cased, not stemmed) to the
	// documents whose name has it among the words that say what the tool
	// does ([nameWords]), each document once.
	nameForms map[string][]int32
}

// buildIndex indexes entries (document id = position in entries) for
// BM25F: a term's frequency in a document is the sum over the fields of its
// occurrences, each field's weighted and normalised by that field's length
// against its average (so a long description does not dilute a name).
func buildIndex(entries []*Entry) *index {
	ix := &index{
		terms:   map[string]int32{},
		tagMask: map[string][]bool{},
		own:     map[uint32][]posting{},
		hyper:   map[uint32][]posting{},
	}
	var avgLen [numFields]float64
	for _, e := range entries {
		for f, toks := range e.td.fieldToks {
			avgLen[f] += float64(len(toks))
		}
	}
	for f := range avgLen {
		avgLen[f] = max(avgLen[f]/float64(max(len(entries), 1)), 1)
	}
	tf := map[int32]float32{}
	otf, htf := map[uint32]float32{}, map[uint32]float32{}
	ix.backendOf = make([]int32, len(entries))
	ix.nameForms = map[string][]int32{}
	for doc, e := range entries {
		if doc == 0 || e.Backend != entries[doc-1].Backend { // entries are sorted by name
			ix.backendToks = append(ix.backendToks, e.td.fieldToks[fieldBackend])
		}
		ix.backendOf[doc] = int32(len(ix.backendToks) - 1)
		clear(tf)
		clear(otf)
		clear(htf)
		for f, toks := range e.td.fieldToks {
			if len(toks) == 0 {
				continue
			}
			w := fieldWeights[f] / float32(1-bm25B+bm25B*float64(len(toks))/avgLen[f])
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
				rel := lexicon.Concepts(t.stem)
				for _, c := range rel.Own {
					otf[c] += w
				}
				for _, c := range rel.Hyper {
					htf[c] += w
				}
			}
		}
		for _, t := range nameWords(e.td.fieldToks[fieldName], e.td.fieldToks[fieldBackend]) {
			if ds := ix.nameForms[t.word]; len(ds) == 0 || ds[len(ds)-1] != int32(doc) {
				ix.nameForms[t.word] = append(ds, int32(doc))
			}
		}
		for id, f := range tf {
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(doc), tf: f})
		}
		for c, f := range otf {
			ix.own[c] = append(ix.own[c], posting{doc: int32(doc), tf: f})
		}
		for c, f := range htf {
			ix.hyper[c] = append(ix.hyper[c], posting{doc: int32(doc), tf: f})
		}
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
	ix.surfRunes = make([][]rune, len(ix.surface))
	for id, w := range ix.surface {
		ix.surfRunes[id] = []rune(w)
	}
	ix.buildAbbrevs(entries)
	return ix
}

// scratch is a search's per-document working memory, pooled: a search
// over thousands of tools would otherwise allocate two arrays of that size.
type scratch struct{ scores, word []float64 }

var scratchPool sync.Pool

// scratchFor returns zeroed scratch for n documents; put it back into
// scratchPool when done.
func scratchFor(n int) *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil || cap(sc.scores) < n {
		return &scratch{scores: make([]float64, n), word: make([]float64, n)}
	}
	sc.scores, sc.word = sc.scores[:n], sc.word[:n]
	clear(sc.scores)
	clear(sc.word)
	return sc
}

// idf is the BM25 inverse document frequency (Lucene's non-negative form).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Search ranks tools against a free-text query with BM25F (k1=1.2, b=0.5)
// over the weighted fields tool name (×3), backend name, title and
// description, parameter names (×1.5), parameter descriptions (×0.5),
// tags, the backend's description (×0.5) and parameters' allowed values;
// a query word whose very form is a word of the tool's name multiplies its
// score by 1+surfaceWeight (see [index.applyNameForms]). Query words are tokenized like
// the documents (lower-cased, split on punctuation and camelCase, stopwords
// dropped, stemmed). A query word also matches, at conceptWeight of an
// exact match, tools whose words share a WordNet concept with it
// (synonyms, hypernyms: [lexicon.Concepts]), and at nearWeight tools
// with a word FOLDOC gives one entry with it ("folder": directory;
// [lexicon.Near]), counted once per tool by its best reading. A word that
// matches none of these ways is corrected to the
// nearest catalogue word (see [SearchResult.Corrections]) and reported in
// Unmatched if none is close. Words are OR-ed: a tool matching more of them
// scores higher.
//
// An empty (or all-whitespace) query is not an error: it lists the tools in
// name order, honouring Tag and Limit, with Total counting all of them; use
// [Catalog.List] to page through everything.
func (c *Catalog) Search(query string, opts SearchOptions) SearchResult {
	s := c.snap.Load()
	r := s.rank(query, opts)
	res := SearchResult{Query: query, Tag: opts.Tag, Brief: opts.Brief, Hits: make([]Hit, len(r.docs)),
		Total: r.total, Corrections: r.corrections, Unmatched: r.unmatched}
	for i, d := range r.docs {
		res.Hits[i] = makeHit(s.entries[d], math.Round(r.scores[i]*1000)/1000, opts.Brief)
	}
	return res
}

// Ranked is one tool of a [Catalog.Rank] ranking.
type Ranked struct {
	// Name is "backend.tool".
	Name string `json:"name"`
	// Score is the lexical relevance (see [Catalog.Search]); 0 when
	// listing for an empty query.
	Score float64 `json:"score"`
}

// Ranking is the outcome of [Catalog.Rank].
type Ranking struct {
	// Tools are the best matches, best first (ties by name).
	Tools []Ranked `json:"tools"`
	// Total is the number of matching tools before the limit.
	Total int `json:"total"`
	// Corrections and Unmatched are as in [SearchResult].
	Corrections []Correction `json:"corrections,omitempty"`
	Unmatched   []string     `json:"unmatched,omitempty"`
}

// Rank is [Catalog.Search]'s lexical ranking alone: the tools' names and
// scores, best first, for a caller that fuses it with another ranking
// (e.g. by embeddings). opts.Brief is ignored.
func (c *Catalog) Rank(query string, opts SearchOptions) Ranking {
	s := c.snap.Load()
	r := s.rank(query, opts)
	out := Ranking{Tools: make([]Ranked, len(r.docs)), Total: r.total, Corrections: r.corrections, Unmatched: r.unmatched}
	for i, d := range r.docs {
		out.Tools[i] = Ranked{Name: s.entries[d].Name, Score: r.scores[i]}
	}
	return out
}

// Hits renders named tools as search hits, in the order given, skipping
// names that are not tools of the catalogue: how a caller that ranked the
// tools itself (fusing [Catalog.Rank] with another ranking) answers.
func (c *Catalog) Hits(tools []Ranked, brief bool) []Hit {
	s := c.snap.Load()
	hits := make([]Hit, 0, len(tools))
	for _, t := range tools {
		if es := s.byName[t.Name]; len(es) == 1 {
			hits = append(hits, makeHit(es[0], math.Round(t.Score*1000)/1000, brief))
		}
	}
	return hits
}

// ranking is a snapshot's answer to a query: documents best first with
// their scores.
type ranking struct {
	docs        []int32
	scores      []float64
	total       int
	corrections []Correction
	unmatched   []string
}

// rank scores the snapshot's tools against query (see [Catalog.Search]).
func (s *snapshot) rank(query string, opts SearchOptions) ranking {
	ix := s.index()
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, MaxSearchLimit)
	var res ranking

	var allowed []bool // nil: every document
	if opts.Tag != "" {
		allowed = ix.tagMask[strings.ToLower(strings.TrimSpace(opts.Tag))]
		if allowed == nil {
			allowed = make([]bool, len(s.entries))
		}
	}
	ok := func(doc int32) bool { return allowed == nil || allowed[doc] }

	if strings.TrimSpace(query) == "" {
		for doc := range s.entries {
			if !ok(int32(doc)) {
				continue
			}
			if res.total++; len(res.docs) < limit {
				res.docs = append(res.docs, int32(doc))
				res.scores = append(res.scores, 0)
			}
		}
		return res
	}

	toks := tokenize(query, nil)
	if len(toks) == 0 { // only stopwords or punctuation
		res.unmatched = strings.Fields(strings.ToLower(query))
		return res
	}
	n := len(s.entries)
	sc := scratchFor(n)
	defer scratchPool.Put(sc)
	scores := sc.scores
	word := sc.word     // one query word's score per document, zero between words
	var touched []int32 // documents with word[doc] > 0
	bm25 := func(w float64, p posting) float64 {
		tf := float64(p.tf)
		return w * tf * (bm25K1 + 1) / (tf + bm25K1)
	}
	// meet scores each allowed document of plist for the current query
	// word under weight w: the best of its ways to meet the word, or, with
	// add, their sum (an acronym's words).
	meet := func(plist []posting, w float64, add bool) {
		for _, p := range plist {
			if !ok(p.doc) {
				continue
			}
			if word[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			if add {
				word[p.doc] += bm25(w, p)
			} else {
				word[p.doc] = max(word[p.doc], bm25(w, p))
			}
		}
	}
	seen := make(map[string]bool, len(toks))
	for _, t := range toks {
		if seen[t.stem] {
			continue
		}
		seen[t.stem] = true
		touched = touched[:0]
		id, found := ix.terms[t.stem]
		if found {
			plist := ix.postings[id]
			meet(plist, idf(n, len(plist)), false)
		}
		// A clipped word also means the word it begins ("repo": repository).
		if long, isClipped := ix.clipped[id]; found && isClipped {
			plist := ix.postings[long]
			meet(plist, idf(n, len(plist)), false)
		}
		// Through concepts: the word's senses met by the tool's words'
		// senses or hypernyms, the word's hypernyms by the tool's senses.
		rel := lexicon.Concepts(t.stem)
		conceptFound := false
		// Siblings (a hypernym of each) are not met: too loose.
		for _, m := range [...]struct {
			concepts []uint32
			postings map[uint32][]posting
		}{{rel.Own, ix.own}, {rel.Own, ix.hyper}, {rel.Hyper, ix.own}} {
			for _, c := range m.concepts {
				plist := m.postings[c]
				conceptFound = conceptFound || len(plist) > 0
				meet(plist, conceptWeight*idf(n, len(plist)), false)
			}
		}
		// Through the computing dictionary's synonyms ("folder": directory).
		for _, near := range lexicon.Near(t.stem) {
			if id, ok := ix.terms[near]; ok {
				conceptFound = true
				plist := ix.postings[id]
				meet(plist, nearWeight*idf(n, len(plist)), false)
			}
		}
		// An unknown pair of letters may be the catalogue's acronym of two
		// words ("pr": pull request): it matches both.
		if acr, isAcr := ix.acronyms[t.stem]; !found && !conceptFound && isAcr {
			found = true
			for _, id := range acr {
				plist := ix.postings[id]
				meet(plist, idf(n, len(plist)), true)
			}
		}
		if !found && !conceptFound {
			var corrected bool
			if id, corrected = ix.correct(t); corrected {
				found = true
				res.corrections = append(res.corrections, Correction{From: t.word, To: ix.surface[id]})
				plist := ix.postings[id]
				meet(plist, correctedWeight*idf(n, len(plist)), false)
			}
		}
		if len(touched) == 0 {
			res.unmatched = append(res.unmatched, t.word)
		}
		for _, d := range touched {
			scores[d] += word[d]
			word[d] = 0
		}
	}
	ix.applyNameForms(scores, word, toks)
	// A query word that names a backend ("github", "slack") says where to
	// look: that backend's matching tools count double, so that of twin
	// tools the named server's ranks first.
	var named []bool // by backend number
	for b, bt := range ix.backendToks {
		if slices.ContainsFunc(bt, func(t token) bool { return seen[t.stem] }) {
			if named == nil {
				named = make([]bool, len(ix.backendToks))
			}
			named[b] = true
		}
	}
	if named != nil {
		for d, sc := range scores {
			if sc > 0 && named[ix.backendOf[d]] {
				scores[d] *= backendNamedFactor
			}
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
		res.total++
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
	res.docs = top
	res.scores = make([]float64, len(top))
	for i, d := range top {
		res.scores[i] = scores[d]
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
