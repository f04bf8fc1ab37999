package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/isogate/isogate/internal/lexicon"
)

// TestCommittedTableIsGenerated regenerates the table from WordNet
// (Debian's wordnet-base, when installed) and compares it with the one the
// binary embeds: the committed table is what the generator makes of WordNet,
// and the generator is reproducible.
func TestCommittedTableIsGenerated(t *testing.T) {
	const dir = "/usr/share/wordnet"
	if _, err := os.Stat(filepath.Join(dir, "data.noun")); err != nil {
		t.Skipf("WordNet not installed (apt-get install wordnet-base): %v", err)
	}
	out := filepath.Join(t.TempDir(), "wordnet.gz")
	if err := run(dir, out, lexicon.TableSenses); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../wordnet.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/lexicon/wordnet.gz differs from what gen makes of %s (%d bytes, committed %d): run go generate ./internal/lexicon", dir, len(got), len(want))
	}
}

// TestCommittedFoldocIsGenerated regenerates the FOLDOC table from
// Debian's dict-foldoc (when installed) and compares it with the one the
// binary embeds.
func TestCommittedFoldocIsGenerated(t *testing.T) {
	const src = "/usr/share/dictd/foldoc.dict.dz"
	if _, err := os.Stat(src); err != nil {
		t.Skipf("FOLDOC not installed (apt-get install dict-foldoc): %v", err)
	}
	out := filepath.Join(t.TempDir(), "foldoc.gz")
	if err := runFoldoc(src, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../foldoc.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/lexicon/foldoc.gz differs from what gen makes of %s (%d bytes, committed %d): run go generate ./internal/lexicon", src, len(got), len(want))
	}
}
