package surface

import (
	"fmt"
	"strings"
)

// BackendNotice says, in at most two short lines, which backends are still
// connecting (their tools may be missing from the catalogue; calls wait for
// them) and which are down. It is "" when every backend is up.
func (sf *Surface) BackendNotice() string {
	connecting, down := sf.manager.NotReady()
	var b strings.Builder
	if len(connecting) > 0 {
		fmt.Fprintf(&b, "Still connecting (tools may be missing; calls wait for them): %s.\n", strings.Join(connecting, ", "))
	}
	if len(down) > 0 {
		fmt.Fprintf(&b, "Down (calls fail; read isogate://backend/<name> for why): %s.\n", strings.Join(down, ", "))
	}
	return b.String()
}

// withBackendNotice appends the BackendNotice, if any, to a text answer.
func (sf *Surface) withBackendNotice(text string) string {
	n := sf.BackendNotice()
	if n == "" {
		return text
	}
	return strings.TrimRight(text, "\n") + "\n\n" + n
}
