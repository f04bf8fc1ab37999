package lexicon

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./gen -wordnet /usr/share/wordnet -out wordnet.gz

// TableSenses is how many senses of a word, most frequent first, the
// table keeps (with their direct hypernyms): the rarer senses of common
// words relate them to unrelated ones ("file" the tool, "file" the line).
const TableSenses = 3

//go:embed wordnet.gz
var tableGz []byte

var (
	tableOnce sync.Once
	table     *concepts
	tableErr  error
)

// Related is how a stem relates to WordNet's concepts (numbers).
type Related struct {
	// Own are the concepts of the most frequent senses of the words the
	// stem comes from: two stems sharing one are synonyms.
	Own []uint32
	// Hyper are the direct hypernyms of those senses: a stem whose Own
	// concept is in another's Hyper names a kind of it ("user" is a kind of
	// "person").
	Hyper []uint32
}

// concepts is the parsed table, flat: about 2 MB for 36 000 stems.
type concepts struct {
	entry map[string]uint32 // stem → entry number; keys share one string
	start []uint32          // entry → its first concept in ids; one more at the end
	hyper []uint32          // entry → its first hypernym concept in ids
	ids   []uint32
}

// Concepts returns how a stem (see [Stem]) relates to WordNet's concepts,
// the zero Related for a stem WordNet relates to no other. Only concepts
// that relate two stems are kept. The slices must not be modified.
func Concepts(stem string) Related {
	tableOnce.Do(func() { table, tableErr = parseTable(tableGz) })
	e, ok := table.entry[stem]
	if !ok {
		return Related{}
	}
	a, h, b := table.start[e], table.hyper[e], table.start[e+1]
	return Related{Own: table.ids[a:h:h], Hyper: table.ids[h:b:b]}
}

// TableError reports whether the embedded table failed to load (it is
// then empty): a broken build, not a run-time condition.
func TableError() error {
	Concepts("")
	return tableErr
}

// parseTable reads the gzip-compressed "stem own… / hyper…" table.
func parseTable(gz []byte) (*concepts, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return &concepts{}, fmt.Errorf("lexicon table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return &concepts{}, fmt.Errorf("lexicon table: %w", err)
	}
	text := string(raw) // one string: the stems below are its substrings
	t := &concepts{entry: map[string]uint32{}}
	for n := 1; text != ""; n++ {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		stem, rest, _ := strings.Cut(line, " ")
		t.entry[stem] = uint32(len(t.start))
		t.start = append(t.start, uint32(len(t.ids)))
		hyper := -1
		for _, f := range strings.Fields(rest) {
			if f == "/" {
				hyper = len(t.ids)
				continue
			}
			id, err := strconv.ParseUint(f, 36, 32)
			if err != nil {
				return &concepts{}, fmt.Errorf("lexicon table line %d: %w", n, err)
			}
			t.ids = append(t.ids, uint32(id))
		}
		if hyper < 0 {
			hyper = len(t.ids)
		}
		t.hyper = append(t.hyper, uint32(hyper))
	}
	t.start = append(t.start, uint32(len(t.ids)))
	return t, nil
}
