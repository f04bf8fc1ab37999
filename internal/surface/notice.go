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
		b.WriteString(downNotice(down) + "\n")
	}
	return b.String()
}

// downNotice names the backends that are down (their tools are not in the
// catalogue, calls to them fail), or is "" when none is.
func downNotice(down []string) string {
	if len(down) == 0 {
		return ""
	}
	return fmt.Sprintf("Down (calls fail; read isogate://backend/<name> for why): %s.", strings.Join(down, ", "))
}

// withDownNotice appends the downNotice, if any, to a text answer: a tool
// that is not found may belong to a backend that is down.
func (sf *Surface) withDownNotice(text string) string {
	if n := downNotice(sf.downBackends()); n != "" {
		return text + "\n\n" + n
	}
	return text
}

// withBackendNotice appends the BackendNotice, if any, to a text answer.
func (sf *Surface) withBackendNotice(text string) string {
	n := sf.BackendNotice()
	if n == "" {
		return text
	}
	return strings.TrimRight(text, "\n") + "\n\n" + n
}

// downBackends names the backends that are down (none without a manager).
func (sf *Surface) downBackends() []string {
	if sf.manager == nil {
		return nil
	}
	_, down := sf.manager.NotReady()
	return down
}
