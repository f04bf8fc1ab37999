package surface

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// awaitStarting waits, up to Options.DiscoveryWait, for the backends that
// are still starting and whose tools are not known yet (no cached list),
// so that discovery right after start-up finds their tools instead of
// answering "No tools match". It returns the backends still starting when
// the wait ended, sorted.
func (sf *Surface) awaitStarting(ctx context.Context) []string {
	starting := sf.unknownStarting()
	if len(starting) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, sf.opts.DiscoveryWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, name := range starting {
		wg.Go(func() { _ = sf.manager.WaitReady(ctx, name) }) // a backend that fails is down, not starting
	}
	wg.Wait()
	return sf.unknownStarting()
}

// unknownStarting lists the backends still connecting whose tools are
// unknown.
func (sf *Surface) unknownStarting() []string {
	connecting, _ := sf.manager.NotReady()
	if len(connecting) == 0 {
		return nil
	}
	known := sf.manager.Tools()
	var out []string
	for _, name := range connecting {
		if _, ok := known[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// startingNotice says which backends are still starting after the wait:
// their tools are missing from the answer, and a retry will find them.
func startingNotice(starting []string) string {
	if len(starting) == 0 {
		return ""
	}
	return fmt.Sprintf("Backends still starting after waiting for them: %s. Their tools are not listed yet: retry in a few seconds "+
		"(isogate://backends shows their state).", strings.Join(starting, ", "))
}

// withStartingNotice puts the startingNotice, if any, before text: an empty
// answer must not read as "these tools do not exist".
func withStartingNotice(text string, starting []string) string {
	if n := startingNotice(starting); n != "" {
		return n + "\n\n" + text
	}
	return text
}
