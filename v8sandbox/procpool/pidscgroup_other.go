//go:build !linux

package procpool

import "errors"

// pidsCgroups: cgroups exist on Linux only.
type pidsCgroups struct {
	dir string
	why string
}

func probePidsCgroups() pidsCgroups { return pidsCgroups{why: "not on this system"} }

func (c pidsCgroups) place(int) (string, error) { return "", errors.New(c.why) }

func removeCgroup(string) error { return nil }
