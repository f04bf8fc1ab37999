package codemode

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/isogate/isogate/internal/catalog"
	"github.com/isogate/isogate/internal/codemode/output"
)

// With the census on, a program run with typecheck off is checked after
// its run, once, and recorded with its diagnostics, its declarations and
// how the run ended; the run's output is what it is without the census.
func TestCensusRecordsEachProgramOnce(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "census-test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	census.once.Do(func() {}) // the environment is not read: this test sets the file
	census.mu.Lock()
	oldFile, oldDir := census.file, census.dir
	census.file, census.dir = f, dir
	census.mu.Unlock()
	t.Cleanup(func() {
		census.mu.Lock()
		census.file, census.dir = oldFile, oldDir
		census.mu.Unlock()
		f.Close()
	})

	cat := catalog.New()
	cat.SetBackend("counter", nil, []*mcp.Tool{{Name: "bump", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}}}})
	e, err := New(Options{Runner: sharedPool(), Catalog: FromCatalog(cat), Caller: &countingCaller{},
		Output: output.DefaultOptions(), Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	const program = "const r = await counter.bump({id: 'a'});\ntry { await counter.bumpp({id: 'b'}) } catch (e) {}\nreturn r.n"
	for range 2 {
		if r := e.Execute(context.Background(), Request{Code: program}); r.IsError || r.Text != "1" && r.Text != "2" {
			t.Fatalf("run: %+v", r)
		}
	}
	f.Sync()
	rf, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	var entries []CensusEntry
	for sc := bufio.NewScanner(rf); sc.Scan(); {
		var ce CensusEntry
		if err := json.Unmarshal(sc.Bytes(), &ce); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, ce)
	}
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1 (a program is recorded once): %+v", len(entries), entries)
	}
	ce := entries[0]
	if ce.Code != program || ce.IsError || len(ce.Diagnostics) != 1 || ce.Diagnostics[0].Kind != "unknown_tool" || !ce.Diagnostics[0].Certain {
		t.Fatalf("entry: %+v", ce)
	}
	if _, err := os.Stat(filepath.Join(dir, ce.Decls)); err != nil {
		t.Fatalf("declarations not kept: %v", err)
	}
}
