// Package embedsearch ranks search_tools' answers with embeddings from an
// operator's OpenAI-compatible endpoint (search.embeddings), fused with the
// catalogue's lexical ranking by reciprocal rank.
//
// Tool vectors are computed once per catalogue version (the hash of the
// tools' embedding texts), in the background, in batches, and kept in a
// [Store] (Redis when the replicas share one: one replica computes, the
// others read; never per session). Until they are ready, and whenever the
// query's own vector is not back within the bound, search answers
// lexically and says so in a notice.
package embedsearch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/metrics"
	"github.com/isogate/isogate/internal/resultstore"
)

// Options configure [New]; the zero value of each field but Client and
// Catalog means its default.
type Options struct {
	// Client asks the endpoint for vectors (required).
	Client *Client
	// Catalog is the catalogue searched (required).
	Catalog *catalog.Catalog
	// Store keeps the tool vectors; nil: a [Memory] of this process.
	Store Store
	// QueryTimeout bounds how long a search waits for its query's vector
	// (search.embeddings.timeout).
	QueryTimeout time.Duration
	// BatchSize is how many tool texts one request embeds
	// (search.embeddings.batch_size).
	BatchSize int
	// Logger receives failures, by kind; default slog.Default().
	Logger *slog.Logger
	// Metrics records requests, fallbacks and vectors; nil: none.
	Metrics *metrics.Metrics

	// retrying, when set, is told each wait chosen after a failure (tests).
	retrying func(time.Duration)
}

// Tunables of the background computation.
const (
	// batchTimeout bounds one request for a batch of tool vectors.
	batchTimeout = 2 * time.Minute
	// lockTTL is the lease of a catalogue version's computing lock: its
	// holder renews it every third of it while its requests run, and
	// another replica computes the vectors once it has lapsed (the holder
	// died).
	lockTTL = 15 * time.Second
	// pollInterval is how often a replica waiting for another's
	// computation reads the store and tries the lock.
	pollInterval = 250 * time.Millisecond
	// firstRetry and lastRetry bound the wait before computing again
	// after a failure (doubling in between; a catalogue change computes
	// at once and starts again from firstRetry). lastRetry is short so an
	// endpoint that comes up after the gateway is used soon.
	firstRetry, lastRetry = 2 * time.Second, 30 * time.Second
	// logEvery bounds how often one kind of query failure is logged.
	logEvery = time.Minute
)

// Semantic ranks the catalogue's tools against queries with embeddings.
// All methods are safe for concurrent use.
type Semantic struct {
	client   *Client
	cat      *catalog.Catalog
	store    Store
	timeout  time.Duration
	batch    int
	logger   *slog.Logger
	metrics  *metrics.Metrics
	retrying func(time.Duration)

	cur     atomic.Pointer[vectorSet] // the latest vectors, nil before the first
	wake    chan struct{}             // a catalogue change to look at (buffered 1)
	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever cur changes or a computation fails
	lastErr error         // the last computation's failure, nil after a success
	logged  map[string]time.Time

	cancel context.CancelFunc
	done   chan struct{}
}

// New starts computing the catalogue's tool vectors in the background and
// returns at once. Close stops it.
func New(opts Options) *Semantic {
	d := config.Default().Search.Embeddings
	s := &Semantic{client: opts.Client, cat: opts.Catalog, store: opts.Store, timeout: opts.QueryTimeout,
		batch: opts.BatchSize, logger: opts.Logger, metrics: opts.Metrics, retrying: opts.retrying,
		wake: make(chan struct{}, 1), changed: make(chan struct{}), logged: map[string]time.Time{}, done: make(chan struct{})}
	if s.store == nil {
		s.store = NewMemory()
	}
	if s.timeout <= 0 {
		s.timeout = d.Timeout
	}
	if s.batch <= 0 {
		s.batch = d.BatchSize
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
	s.Changed()
	return s
}

// Close stops the background computation and waits for it to end.
func (s *Semantic) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Changed tells the background computation the catalogue may have
// changed; it never blocks.
func (s *Semantic) Changed() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Ready reports whether the vectors of the catalogue as it is now are
// ready.
func (s *Semantic) Ready() bool {
	set := s.cur.Load()
	return set != nil && set.version == s.cat.Version()
}

// WaitReady waits until the vectors of the catalogue as it is now are
// ready, or ctx ends (with the last computation's failure, if any).
func (s *Semantic) WaitReady(ctx context.Context) error {
	return s.wait(ctx, false)
}

// WaitSettled is [Semantic.WaitReady] that also returns as soon as the
// latest computation of the vectors has failed, with that failure: whether
// the endpoint answers, without waiting out the backoff before its retry
// (isogate doctor).
func (s *Semantic) WaitSettled(ctx context.Context) error {
	return s.wait(ctx, true)
}

// wait waits until the vectors are ready, ctx ends or, with settle, the
// latest computation has failed.
func (s *Semantic) wait(ctx context.Context, settle bool) error {
	for {
		s.mu.Lock()
		ch, last := s.changed, s.lastErr
		s.mu.Unlock()
		if s.Ready() {
			return nil
		}
		if settle && last != nil {
			return last
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last failure: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		}
	}
}

// notify wakes WaitReady's callers, recording the computation's outcome.
func (s *Semantic) notify(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	close(s.changed)
	s.changed = make(chan struct{})
}

// run computes the vectors whenever the catalogue changes, and again
// after a failure (backing off).
func (s *Semantic) run(ctx context.Context) {
	defer close(s.done)
	var retry time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for {
			err := s.refresh(ctx)
			if ctx.Err() != nil {
				return
			}
			s.notify(err)
			if err == nil {
				retry = 0
				break
			}
			retry = nextRetry(retry)
			if s.retrying != nil {
				s.retrying(retry)
			}
			s.logger.Warn("search embeddings: tool vectors not computed; search ranks by words only until they are",
				slog.String("kind", kindOf(err)), slog.Any("error", err), slog.Duration("retry_in", retry))
			t := time.NewTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-s.wake:
				// The catalogue changed: compute at once, and back off
				// from the start should that fail too.
				t.Stop()
				retry = 0
			case <-t.C:
			}
		}
	}
}

// nextRetry is the wait after a failure that followed a wait of prev (0:
// none): doubling from firstRetry up to lastRetry.
func nextRetry(prev time.Duration) time.Duration {
	return min(max(2*prev, firstRetry), lastRetry)
}

// refresh brings the vectors in line with the catalogue: read from the
// store when another replica (or an earlier run) computed them, else
// computed under the store's lock, reusing the vectors of unchanged tools.
func (s *Semantic) refresh(ctx context.Context) error {
	entries, version := s.cat.View()
	prev := s.cur.Load()
	if prev != nil && prev.version == version {
		return nil
	}
	set := &vectorSet{version: version, entries: entries, texts: make([]textHash, len(entries))}
	texts := make([]string, len(entries))
	for i, e := range entries {
		texts[i] = e.EmbeddingText()
		set.texts[i] = sha256.Sum256([]byte(texts[i]))
	}
	set.hash = catalogueHash(set.texts)
	switch {
	case prev != nil && prev.hash == set.hash: // the same texts: a new version of the same tools
		set.dims, set.vecs = prev.dims, prev.vecs
	case len(entries) == 0:
	default:
		if err := s.obtain(ctx, set, texts, prev); errors.Is(err, errStale) {
			s.Changed() // look at the catalogue as it is now
			return nil
		} else if err != nil {
			return err
		}
	}
	s.cur.Store(set)
	if s.cat.Version() != version {
		s.Changed() // changed meanwhile: again
	}
	return nil
}

// obtain fills set's vectors: from the store, from another replica
// computing them (polling the store while its lock holds), or computed
// here under the lock.
func (s *Semantic) obtain(ctx context.Context, set *vectorSet, texts []string, prev *vectorSet) error {
	key := storeKey(s.client.Model, s.client.Dimensions, set.hash)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if ok, err := s.load(ctx, key, set); err != nil || ok {
			return err
		}
		locked, err := s.store.Lock(ctx, key, lockTTL)
		if err != nil {
			// The store is down: compute for this replica alone.
			s.logger.Warn("search embeddings: store unavailable; computing the tool vectors without sharing them", slog.Any("error", err))
			return s.compute(ctx, set, texts, prev)
		}
		if locked {
			return s.computeLocked(ctx, key, set, texts, prev)
		}
		// Another replica computes them: poll for its entry, and for its
		// lock to lapse (it died), unless the catalogue changes meanwhile.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if s.cat.Version() != set.version {
			return errStale
		}
	}
}

// computeLocked computes set's vectors under key's lock, renewing it
// while the requests run, stores them and releases the lock.
func (s *Semantic) computeLocked(ctx context.Context, key string, set *vectorSet, texts []string, prev *vectorSet) error {
	defer func() { _ = s.store.Unlock(context.WithoutCancel(ctx), key) }()
	// Another replica may have stored them between the read and the lock.
	if ok, err := s.load(ctx, key, set); err != nil || ok {
		return err
	}
	renewCtx, stopRenewing := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(lockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-t.C:
				if err := s.store.Renew(renewCtx, key, lockTTL); err != nil && renewCtx.Err() == nil {
					s.logger.Warn("search embeddings: computing lock not renewed", slog.Any("error", err))
				}
			}
		}
	}()
	err := s.compute(ctx, set, texts, prev)
	stopRenewing()
	<-renewed
	if err != nil {
		return err
	}
	if perr := s.store.Put(ctx, key, set.encode()); perr != nil {
		s.logger.Warn("search embeddings: tool vectors computed but not stored", slog.Any("error", perr))
	}
	return nil
}

// errStale ends a wait for another replica's vectors: the catalogue
// changed meanwhile, and the vectors waited for are not its own any more.
var errStale = errors.New("the catalogue changed meanwhile")

// load reads key's entry into set; false when there is none (or it does
// not decode: it is then recomputed).
func (s *Semantic) load(ctx context.Context, key string, set *vectorSet) (bool, error) {
	data, err := s.store.Get(ctx, key)
	if errors.Is(err, resultstore.ErrTampered) {
		s.logger.Warn("search embeddings: stored tool vectors refused (store.hmac_key); computing them again", slog.Any("error", err))
		return false, nil
	}
	if err != nil {
		s.logger.Warn("search embeddings: store unavailable", slog.Any("error", err))
		return false, nil
	}
	if data == nil {
		return false, nil
	}
	dims, vecs, err := decodeInto(data, set.texts)
	if err != nil || (s.client.Dimensions > 0 && dims != s.client.Dimensions) {
		s.logger.Warn("search embeddings: stored tool vectors unusable; computing them again", slog.Any("error", err))
		return false, nil
	}
	set.dims, set.vecs = dims, vecs
	s.metrics.EmbeddingVectors("stored", len(set.texts))
	return true, nil
}

// compute asks the endpoint for the vectors of the texts prev does not
// have, in batches, and fills set.
func (s *Semantic) compute(ctx context.Context, set *vectorSet, texts []string, prev *vectorSet) error {
	reuse := prev.byText()
	if prev != nil && s.client.Dimensions == 0 {
		set.dims = prev.dims
	}
	if s.client.Dimensions > 0 {
		set.dims = s.client.Dimensions
	}
	got := make([][]float32, len(texts))
	var missing []int
	for i, h := range set.texts {
		if v, ok := reuse[h]; ok && len(v) == set.dims {
			got[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	s.metrics.EmbeddingVectors("reused", len(texts)-len(missing))
	for start := 0; start < len(missing); start += s.batch {
		idx := missing[start:min(start+s.batch, len(missing))]
		inputs := make([]string, len(idx))
		for j, i := range idx {
			inputs[j] = texts[i]
		}
		vecs, err := s.embed(ctx, metrics.EmbedTools, batchTimeout, inputs, set.dims)
		if err != nil {
			return err
		}
		if set.dims == 0 {
			set.dims = len(vecs[0]) // the client checked they are all of one length
		}
		for j, i := range idx {
			got[i] = vecs[j]
		}
		s.metrics.EmbeddingVectors("computed", len(idx))
	}
	set.vecs = make([]float32, 0, len(texts)*set.dims)
	for _, v := range got {
		set.vecs = append(set.vecs, v...)
	}
	return nil
}

// embed asks the endpoint for inputs' vectors within bound, requires them
// to be of dims dimensions (when dims > 0), and records the request.
func (s *Semantic) embed(ctx context.Context, kind string, bound time.Duration, inputs []string, dims int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	vecs, err := s.client.Embed(ctx, inputs)
	if err == nil && dims > 0 && len(vecs[0]) != dims {
		err = &EndpointError{Kind: KindDimension, Err: fmt.Errorf("vectors of %d dimensions, want %d", len(vecs[0]), dims)}
	}
	s.metrics.EmbeddingRequest(kind, kindOf(err), time.Since(start))
	return vecs, err
}

// Notices of a search answered by words only.
const (
	NoticeNotReady    = "Ranked by words only: tool embeddings are still being computed."
	noticeNotComputed = "Ranked by words only: tool embeddings could not be computed (%s); retrying."
	noticeTimeout     = "Ranked by words only: the embeddings endpoint did not answer within %s."
	noticeFailed      = "Ranked by words only: the embeddings endpoint failed (%s)."
)

// Fusion parameters.
const (
	// rrfK is reciprocal rank fusion's constant: a tool's fused score is
	// the sum over the rankings of 1/(rrfK + its rank).
	rrfK = 60
	// minDepth is the fewest tools of each ranking that are fused.
	minDepth = 20
)

// Search is [catalog.Catalog.Search] fused with the embeddings' ranking:
// the lexical and the semantic rankings (each to depth max(2×limit, 20))
// are fused by reciprocal rank (k = 60), a tool the query names stays
// first, and a hit's Score is its fused score. When the fusion cannot be
// made (vectors not ready, the query's vector not back within the bound,
// the endpoint failing) the answer is the lexical one, and notice says
// why; notice is "" otherwise. An empty query lists tools, as the
// catalogue does.
func (s *Semantic) Search(ctx context.Context, query string, opts catalog.SearchOptions) (res catalog.SearchResult, notice string) {
	limit := opts.Limit
	if limit <= 0 {
		limit = catalog.DefaultSearchLimit
	}
	limit = min(limit, catalog.MaxSearchLimit)
	if strings.TrimSpace(query) == "" {
		return s.cat.Search(query, opts), ""
	}
	set := s.cur.Load()
	if set == nil || set.version != s.cat.Version() || len(set.entries) == 0 {
		s.Changed()
		s.metrics.EmbeddingFallback("not_ready")
		s.mu.Lock()
		last := s.lastErr
		s.mu.Unlock()
		if last != nil {
			return s.cat.Search(query, opts), fmt.Sprintf(noticeNotComputed, kindOf(last))
		}
		return s.cat.Search(query, opts), NoticeNotReady
	}
	depth := min(catalog.MaxSearchLimit, max(2*limit, minDepth))
	lexOpts := opts
	lexOpts.Limit = depth
	lex := s.cat.Search(query, lexOpts)
	vecs, err := s.embed(ctx, metrics.EmbedQuery, s.timeout, []string{query}, set.dims)
	if err != nil {
		kind := kindOf(err)
		s.logQueryFailure(kind, err)
		lex.Hits = lex.Hits[:min(len(lex.Hits), limit)]
		if kind == KindTimeout {
			s.metrics.EmbeddingFallback("timeout")
			return lex, fmt.Sprintf(noticeTimeout, s.timeout)
		}
		s.metrics.EmbeddingFallback("error")
		return lex, fmt.Sprintf(noticeFailed, kind)
	}
	return fuse(lex, semanticRanking(set, vecs[0], opts.Tag, depth), namedTools(s.cat, query), opts.Brief, limit), ""
}

// logQueryFailure logs a query's failure, each kind at most once per
// logEvery (a down endpoint fails every search).
func (s *Semantic) logQueryFailure(kind string, err error) {
	s.mu.Lock()
	last, seen := s.logged[kind]
	now := time.Now()
	if seen && now.Sub(last) < logEvery {
		s.mu.Unlock()
		return
	}
	s.logged[kind] = now
	s.mu.Unlock()
	s.logger.Warn("search embeddings: query not embedded; search ranked by words only",
		slog.String("kind", kind), slog.Any("error", err))
}

// semanticRanking is the depth tools closest to q (cosine, above 0),
// closest first (ties by name), within the tag filter.
func semanticRanking(set *vectorSet, q []float32, tag string, depth int) []*catalog.Entry {
	type cand struct {
		i   int
		sim float32
	}
	better := func(a, b cand) bool { // a ranks before b
		if a.sim != b.sim {
			return a.sim > b.sim
		}
		return set.entries[a.i].Name < set.entries[b.i].Name
	}
	top := make([]cand, 0, depth+1) // the best so far, best first
	for i, e := range set.entries {
		if tag != "" && !e.HasTag(tag) {
			continue
		}
		c := cand{i, dot(set.vec(i), q)}
		if !(c.sim > 0) || (len(top) == depth && !better(c, top[depth-1])) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, c, func(x, y cand) int {
			if better(x, y) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, at, c)
		if len(top) > depth {
			top = top[:depth]
		}
	}
	out := make([]*catalog.Entry, len(top))
	for k, c := range top {
		out[k] = set.entries[c.i]
	}
	return out
}

// dot is the dot product of two vectors of one length.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// fuse merges the lexical hits and the semantic ranking by reciprocal
// rank: a tool's score is the sum over the rankings that list it of
// 1/(rrfK + its rank). The tools the query names (named, in the lexical
// order) come first whatever their score: a query that is a tool's name
// loses nothing to fusion. Then best first; ties go to the semantic
// ranking, then to names. The lexical answer's query, tag and corrections
// are kept.
func fuse(lex catalog.SearchResult, sem []*catalog.Entry, named []string, brief bool, limit int) catalog.SearchResult {
	type fused struct {
		hit            catalog.Hit
		lexRank, sRank int // 0: not listed
		pinned         int // 1 + position in named, 0: not named
	}
	byName := map[string]*fused{}
	var all []*fused
	at := func(name string, hit func() catalog.Hit) *fused {
		f := byName[name]
		if f == nil {
			f = &fused{hit: hit()}
			byName[name] = f
			all = append(all, f)
		}
		return f
	}
	for i, h := range lex.Hits {
		at(h.Name, func() catalog.Hit { return h }).lexRank = i + 1
	}
	for i, e := range sem {
		at(e.Name, func() catalog.Hit { return e.Hit(0, brief) }).sRank = i + 1
	}
	for i, name := range named {
		if f := byName[name]; f != nil {
			f.pinned = i + 1
		}
	}
	rank := func(r int) float64 {
		if r == 0 {
			return 0
		}
		return 1 / float64(rrfK+r)
	}
	score := func(f *fused) float64 { return rank(f.lexRank) + rank(f.sRank) }
	last := func(r int) int { // a rank, with "not listed" after every listed one
		if r == 0 {
			return math.MaxInt
		}
		return r
	}
	slices.SortFunc(all, func(a, b *fused) int {
		if a.pinned != b.pinned {
			return last(a.pinned) - last(b.pinned)
		}
		if sa, sb := score(a), score(b); sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		if a.sRank != b.sRank {
			if last(a.sRank) < last(b.sRank) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.hit.Name, b.hit.Name)
	})
	out := lex
	out.Total = max(lex.Total, len(all))
	out.Hits = make([]catalog.Hit, 0, min(limit, len(all)))
	for _, f := range all[:min(limit, len(all))] {
		h := f.hit
		h.Score = math.Round(score(f)*1e5) / 1e5
		out.Hits = append(out.Hits, h)
	}
	return out
}

// namedTools are the tools a query names, best first: the query is a
// tool's name (any form [catalog.Catalog.Resolve] takes), or is one with
// spaces for its underscores or hyphens ("move file"); a bare name two
// backends share names both. None for any other query.
func namedTools(cat *catalog.Catalog, query string) []string {
	words := strings.Fields(query)
	if len(words) == 0 {
		return nil
	}
	for _, name := range []string{strings.Join(words, "_"), strings.Join(words, "-")} {
		e, err := cat.Resolve(name)
		if e != nil {
			return []string{e.Name}
		}
		if amb, ok := errors.AsType[*catalog.AmbiguousError](err); ok {
			return amb.Candidates
		}
	}
	return nil
}
