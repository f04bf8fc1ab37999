package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/isogate/isogate/internal/pipeline"
	"github.com/isogate/isogate/internal/resultstore"
)

// RunURIPrefix is the resource URI prefix of run records: RunURIPrefix + id.
const RunURIPrefix = "isogate://runs/"

// maxRunIndex bounds the run id → stored entry index; the store itself
// forgets entries by age and size.
const maxRunIndex = 10000

// runStore keeps run records for their owner (the principal that ran them),
// for sandbox.output.result_ttl within a byte budget, and writes each to
// server.record_dir when configured.
type runStore struct {
	store resultstore.Store
	dir   string
	// outputs holds the full outputs output shaping stored (the result
	// store): a record refers to its run's instead of copying it; nil
	// keeps every result in its record.
	outputs resultstore.Store

	mu    sync.Mutex
	index map[string]string // run id → store id
	order []string          // run ids, oldest first
}

// newRunStore keeps run records in store, and writes them to dir unless it
// is "". A store shared by replicas (resultstore.Keyed) keeps them under
// their run id; another one under its own id, found through a local index.
func newRunStore(store resultstore.Store, dir string) *runStore {
	return &runStore{store: store, dir: dir, index: map[string]string{}}
}

// withOutputs makes records refer to their run's full output in outputs
// (isogate://result/{id}) instead of copying it.
func (s *runStore) withOutputs(outputs resultstore.Store) *runStore {
	s.outputs = outputs
	return s
}

// storedOutput reads owner's full outputs for pipeline.EncodeRecord and
// DecodeRecord; nil without a result store.
func (s *runStore) storedOutput(ctx context.Context, owner string) pipeline.StoredOutput {
	if s.outputs == nil {
		return nil
	}
	return func(uri string) ([]byte, error) {
		id, path, err := resultstore.ParseURI(uri)
		if err != nil || path != "" {
			return nil, fmt.Errorf("run record's result %q: %w", uri, resultstore.ErrBadPath)
		}
		return s.outputs.Get(ctx, owner, id)
	}
}

// put keeps rec for owner and writes it to the record directory; it
// returns why the store did not keep it (STORE_FULL at store.max_bytes),
// so that the run's response does not promise isogate://runs/{id}. The
// store keeps it compact (indented, a record of small values is about
// twice as large) and without the text one part repeats of another
// (pipeline.EncodeRecord); get and the record directory give it whole and
// indented.
func (s *runStore) put(ctx context.Context, owner string, rec *pipeline.RunRecord, logger *slog.Logger) (kept error) {
	data, err := pipeline.EncodeRecord(rec, s.storedOutput(ctx, owner))
	if err != nil {
		logger.Warn("run record not kept", slog.String("run", rec.ID), slog.Any("error", err))
		return fmt.Errorf("encoding run record: %w", err)
	}
	if keyed, ok := s.store.(resultstore.Keyed); ok {
		if kept = keyed.PutID(ctx, owner, rec.ID, data); kept != nil {
			logger.Warn("run record not kept", slog.String("run", rec.ID), slog.Any("error", kept))
		}
	} else if sid, err := s.store.Put(ctx, owner, data); err != nil {
		kept = err
		logger.Warn("run record not kept", slog.String("run", rec.ID), slog.Any("error", err))
	} else {
		s.mu.Lock()
		s.index[rec.ID] = sid
		s.order = append(s.order, rec.ID)
		if len(s.order) > maxRunIndex {
			delete(s.index, s.order[0])
			s.order = s.order[1:]
		}
		s.mu.Unlock()
	}
	if s.dir != "" {
		if pipeline.IsCompactRecord(data) {
			data, _ = json.Marshal(rec) // it encoded once already
		}
		if err := writeRecord(s.dir, rec.ID, indented(data)); err != nil {
			logger.Warn("run record not written", slog.String("run", rec.ID), slog.Any("error", err))
		}
	}
	return kept
}

// get returns the record of run id if owner produced it and it is still kept.
func (s *runStore) get(ctx context.Context, owner, id string) (string, bool) {
	if _, ok := s.store.(resultstore.Keyed); ok {
		data, err := s.store.Get(ctx, owner, id)
		return string(indented(s.whole(ctx, owner, data))), err == nil
	}
	s.mu.Lock()
	sid, ok := s.index[id]
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	data, err := s.store.Get(ctx, owner, sid)
	return string(indented(s.whole(ctx, owner, data))), err == nil
}

// whole returns owner's stored record with every part the store left out
// put back (pipeline.DecodeRecord), as json.Marshal writes the record; a
// record stored whole (by an older version, or with nothing repeated) is
// returned as it was stored.
func (s *runStore) whole(ctx context.Context, owner string, data []byte) []byte {
	if !pipeline.IsCompactRecord(data) {
		return data
	}
	rec, err := pipeline.DecodeRecord(data, s.storedOutput(ctx, owner))
	if err != nil {
		return data
	}
	out, err := json.Marshal(rec)
	if err != nil {
		return data
	}
	return out
}

// indented returns a record as json.MarshalIndent writes it with two
// spaces (data itself if it is not JSON, as a replica of an older version
// may have stored it).
func indented(data []byte) []byte {
	var b bytes.Buffer
	if json.Indent(&b, data, "", "  ") != nil {
		return data
	}
	return b.Bytes()
}

func writeRecord(dir, id string, data []byte) error {
	if strings.ContainsAny(id, `/\.`) {
		return fmt.Errorf("invalid run id %q", id)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record_dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+id+"-*.tmp")
	if err != nil {
		return fmt.Errorf("record_dir: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing run record: %v %v", werr, cerr)
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, id+".json"))
}
