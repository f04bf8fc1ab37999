package surface

import (
	"log/slog"
	"maps"
	"slices"
	"time"
)

// Repoint is a plain (unprefixed) tool or prompt name that now reaches
// another backend than it did: a reload denied the tool on the backend
// that had the name, changed a priority or the order of the backends, or
// a backend with the name came or went. A client calling the name now
// reaches To.
type Repoint struct {
	Kind string    `json:"kind"` // KindTool or KindPrompt
	Name string    `json:"name"`
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// repoints is the most recent re-pointed names, oldest first, and how many
// there were in all.
type repoints struct {
	recent []Repoint
	total  int
}

const (
	// maxRepoints bounds the re-pointed names kept for /readyz and
	// isogate://stats.
	maxRepoints = 50
	// maxRepointLines bounds the lines one naming change logs, one per
	// name; the rest are counted on one more line.
	maxRepointLines = 10
)

// served records which backend each plain name of a kind reaches now, and
// logs and keeps the names that reached another backend before. A name
// that appears or disappears is not a re-point: a client calling it before
// did not reach another backend.
func (nc *nameCollisions) served(kind string, plain map[string]string) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if nc.plain == nil {
		nc.plain = map[string]map[string]string{}
	}
	before := nc.plain[kind]
	nc.plain[kind] = plain
	now := time.Now()
	var moved []Repoint
	for _, name := range slices.Sorted(maps.Keys(plain)) {
		if from := before[name]; from != "" && from != plain[name] {
			moved = append(moved, Repoint{Kind: kind, Name: name, From: from, To: plain[name], At: now})
		}
	}
	for i, m := range moved {
		if i == maxRepointLines {
			nc.logger.Warn("more plain names now reach another backend", slog.String("kind", kind), slog.Int("count", len(moved)-i),
				slog.String("see", "/readyz repointed_names"))
			break
		}
		nc.logger.Warn("plain "+kind+" name \""+m.Name+"\" now reaches backend \""+m.To+"\" (was \""+m.From+"\")",
			slog.String("kind", kind), slog.String("name", m.Name), slog.String("from", m.From), slog.String("to", m.To))
	}
	nc.moves.total += len(moved)
	nc.moves.recent = append(nc.moves.recent, moved...)
	if over := len(nc.moves.recent) - maxRepoints; over > 0 {
		nc.moves.recent = slices.Delete(nc.moves.recent, 0, over)
	}
}

// repointed returns the most recent re-pointed names, oldest first, and
// how many there were since the start.
func (nc *nameCollisions) repointed() ([]Repoint, int) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return append([]Repoint{}, nc.moves.recent...), nc.moves.total
}

// Repointed returns the most recent plain tool and prompt names that now
// reach another backend than before (at most 50, oldest first), and how
// many there were since the start; /readyz and isogate://stats report
// them as repointed_names.
func (sf *Surface) Repointed() ([]Repoint, int) { return sf.collisions.repointed() }
