package codemode

import "sync"

// newCallCounter numbers completed tool calls for progress reports; calls
// complete on several goroutines at once.
func newCallCounter(report func(done int, tool string)) func(tool string) {
	if report == nil {
		return nil
	}
	var mu sync.Mutex
	done := 0
	return func(tool string) {
		mu.Lock()
		defer mu.Unlock()
		done++
		report(done, tool)
	}
}
