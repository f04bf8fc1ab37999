package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// eachEntry decodes each line of the census files in dir whose names match
// pattern ("census-*.jsonl", "args-*.jsonl") as a T and hands it to each;
// a line that is not one is skipped (a run cut off mid-line). It returns
// how many files it read.
func eachEntry[T any](dir, pattern string, each func(T)) int {
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		fatal(err)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var e T
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			each(e)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			fatal(fmt.Errorf("reading %s: %w", name, err))
		}
	}
	return len(files)
}
