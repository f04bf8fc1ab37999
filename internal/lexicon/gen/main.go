// Command gen derives the lexicon's synonym table (internal/lexicon/wordnet.gz)
// from a WordNet 3.0 database (Debian's wordnet-base: /usr/share/wordnet),
// and with -foldoc its computing synonym table (internal/lexicon/foldoc.gz)
// from the Free On-line Dictionary of Computing (Debian's dict-foldoc; see
// runFoldoc).
//
//	go run ./internal/lexicon/gen -wordnet /usr/share/wordnet -out internal/lexicon/wordnet.gz
//	go run ./internal/lexicon/gen -foldoc /usr/share/dictd/foldoc.dict.dz -out internal/lexicon/foldoc.gz
//
// For every single-word noun and verb of WordNet (but proper nouns), its first senses (WordNet
// orders them by frequency) and their direct hypernyms are its concepts;
// irregular forms (noun.exc, verb.exc: "people" → "person") share their base
// word's. Words are keyed by [lexicon.Stem], concepts numbered densely, and a
// concept that only one stem has is dropped: it relates nothing. The output
// is gzip-compressed text, one "stem concept concept …" line per stem,
// concepts in base 36.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/isogate/isogate/internal/lexicon"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet database directory (Debian package wordnet-base)")
	out := flag.String("out", "wordnet.gz", "table to write")
	senses := flag.Int("senses", lexicon.TableSenses, "senses kept per word, most frequent first")
	foldoc := flag.String("foldoc", "", "FOLDOC dictd file (Debian package dict-foldoc: /usr/share/dictd/foldoc.dict.dz): write the computing synonym table instead")
	flag.Parse()
	var err error
	if *foldoc != "" {
		err = runFoldoc(*foldoc, *out)
	} else {
		err = run(*dir, *out, *senses)
	}
	if err != nil {
		slog.Error("lexicon table not generated", "err", err)
		os.Exit(1)
	}
}

// synset is one WordNet synset: its lemmas and direct hypernyms.
type synset struct {
	lemmas []string
	hypers []string // keys of the hypernym synsets
}

func run(dir, out string, senses int) error {
	synsets := map[string]*synset{} // "n01234567" → synset
	common := map[string]bool{}     // lemmas written in lower case somewhere: not only proper nouns
	concepts := map[string]map[string]byte{}
	for _, pos := range []string{"noun", "verb"} {
		if err := readData(filepath.Join(dir, "data."+pos), synsets, common); err != nil {
			return err
		}
	}
	for _, pos := range []string{"noun", "verb"} {
		if err := readIndex(filepath.Join(dir, "index."+pos), pos[:1], senses, synsets, common, concepts); err != nil {
			return err
		}
	}
	for _, pos := range []string{"noun", "verb"} {
		if err := readExceptions(filepath.Join(dir, pos+".exc"), concepts); err != nil {
			return err
		}
	}
	return write(out, senses, concepts)
}

// readData reads a data.noun or data.verb file into synsets, and notes in
// common the lemmas it writes in lower case.
func readData(path string, synsets map[string]*synset, common map[string]bool) error {
	return eachLine(path, func(f []string) error {
		// offset lex_filenum ss_type w_cnt (word lex_id)… p_cnt (ptr offset pos src/tgt)… | gloss
		if len(f) < 4 {
			return fmt.Errorf("short line %q", strings.Join(f, " "))
		}
		pos := f[2]
		if pos == "s" {
			pos = "a"
		}
		wcnt, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("w_cnt %q: %w", f[3], err)
		}
		s := &synset{}
		i := 4
		for range wcnt {
			lemma := strings.ToLower(f[i])
			s.lemmas = append(s.lemmas, lemma)
			if lemma == f[i] {
				common[lemma] = true
			}
			i += 2
		}
		pcnt, err := strconv.Atoi(f[i])
		if err != nil {
			return fmt.Errorf("p_cnt %q: %w", f[i], err)
		}
		i++
		for range pcnt {
			if f[i] == "@" { // hypernym (not @i, instance hypernym)
				s.hypers = append(s.hypers, f[i+2]+f[i+1])
			}
			i += 4
		}
		synsets[pos+f[0]] = s
		return nil
	})
}

// readIndex reads an index.noun or index.verb file: each single-word lemma
// that is not only a proper noun ("aachen") gets the concepts of its first
// senses and their direct hypernyms.
func readIndex(path, pos string, senses int, synsets map[string]*synset, common map[string]bool, concepts map[string]map[string]byte) error {
	return eachLine(path, func(f []string) error {
		// lemma pos synset_cnt p_cnt ptr_symbol… sense_cnt tagsense_cnt synset_offset…
		lemma := f[0]
		if !isWord(lemma) || !common[lemma] {
			return nil
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return fmt.Errorf("synset_cnt %q: %w", f[2], err)
		}
		offsets := f[len(f)-n:]
		for _, off := range offsets[:min(senses, len(offsets))] {
			key := pos + off
			s := synsets[key]
			if s == nil {
				return fmt.Errorf("%s: synset %s not in data", lemma, key)
			}
			addConcept(concepts, lemma, key, own)
			for _, h := range s.hypers {
				addConcept(concepts, lemma, h, hyper)
			}
		}
		return nil
	})
}

// readExceptions gives irregular forms ("people", "ran") their base
// words' concepts.
func readExceptions(path string, concepts map[string]map[string]byte) error {
	return eachLine(path, func(f []string) error {
		if len(f) < 2 || !isWord(f[0]) {
			return nil
		}
		for _, base := range f[1:] {
			for c, rel := range concepts[base] {
				addConcept(concepts, f[0], c, rel)
			}
		}
		return nil
	})
}

// How a word relates to a concept: its own sense, or a sense's direct
// hypernym. A word is never related to a concept both ways: its own
// sense wins.
const (
	own   byte = 1
	hyper byte = 2
)

func addConcept(concepts map[string]map[string]byte, word, key string, rel byte) {
	if concepts[word] == nil {
		concepts[word] = map[string]byte{}
	}
	if r := concepts[word][key]; r == 0 || rel < r {
		concepts[word][key] = rel
	}
}

// write keys the concepts by stem, keeps those that relate two stems
// (one stem's own concept that another stem has too, as its own or as a
// hypernym: hypernyms shared by siblings alone relate too loosely),
// numbers them and writes the gzip-compressed table.
func write(out string, senses int, byLemma map[string]map[string]byte) error {
	byStem := map[string]map[string]byte{}
	for lemma, cs := range byLemma {
		st := lexicon.Stem(lemma)
		for c, rel := range cs {
			addConcept(byStem, st, c, rel)
		}
	}
	stems := make([]string, 0, len(byStem))
	owners, users := map[string]int{}, map[string]int{}
	for st, cs := range byStem {
		stems = append(stems, st)
		for c, rel := range cs {
			users[c]++
			if rel == own {
				owners[c]++
			}
		}
	}
	slices.Sort(stems)
	ids := map[string]int{}
	id := func(k string) int {
		n, ok := ids[k]
		if !ok {
			n = len(ids)
			ids[k] = n
		}
		return n
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# isogate lexicon: WordNet 3.0 nouns and verbs, %d senses each, then after '/' their direct hypernyms (see WORDNET-LICENSE); generated by internal/lexicon/gen\n", senses)
	lines := 0
	for _, st := range stems {
		var ownIDs, hyperIDs []int
		keys := make([]string, 0, len(byStem[st]))
		for c := range byStem[st] {
			keys = append(keys, c)
		}
		slices.Sort(keys) // concepts are numbered in a fixed order: the table is reproducible
		for _, c := range keys {
			rel := byStem[st][c]
			if owners[c] == 0 || users[c] < 2 {
				continue
			}
			if rel == own {
				ownIDs = append(ownIDs, id(c))
			} else {
				hyperIDs = append(hyperIDs, id(c))
			}
		}
		if len(ownIDs)+len(hyperIDs) == 0 {
			continue
		}
		slices.Sort(ownIDs)
		slices.Sort(hyperIDs)
		b.WriteString(st)
		for _, n := range ownIDs {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(int64(n), 36))
		}
		if len(hyperIDs) > 0 {
			b.WriteString(" /")
			for _, n := range hyperIDs {
				b.WriteByte(' ')
				b.WriteString(strconv.FormatInt(int64(n), 36))
			}
		}
		b.WriteByte('\n')
		lines++
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write([]byte(b.String())); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	slog.Info("lexicon table written", "out", out, "stems", lines, "concepts", len(ids), "text_bytes", b.Len())
	return nil
}

// isWord reports whether a lemma is one plain word of at least three
// letters: no collocations ("pull_request"), digits or punctuation.
func isWord(s string) bool {
	if len(s) < 3 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// eachLine calls fn with the fields of every line of a WordNet file that
// is not part of its licence header (those start with spaces).
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("wordnet: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || line[0] == ' ' {
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
