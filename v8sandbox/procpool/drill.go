package procpool

import "encoding/json"

// The escape drill's targets and report (drill_escapedrill.go runs it, in
// binaries built with the escapedrill tag only; escape_drill_test.go reads
// it).

// drillSpec names the targets of the drill.
type drillSpec struct {
	GatewayPID int    `json:"gateway_pid"`
	SiblingPID int    `json:"sibling_pid"`
	BackendPID int    `json:"backend_pid"`
	ConfigFile string `json:"config_file"`
	CreateFile string `json:"create_file"`
	// MountDir is where the drill tries to mount a tmpfs: a directory of
	// the test's own, so that a layer that fails in a drill of one layer
	// alone (a root worker) cannot shadow a directory others use.
	MountDir string `json:"mount_dir"`
	Port     int    `json:"port"`
	// Only, when set, limits the drill to the actions it names (a
	// successful execve replaces the worker, so it is drilled alone).
	Only []string `json:"only,omitempty"`
	Skip []string `json:"skip,omitempty"`
}

// drillOutcome is the result of one action.
type drillOutcome struct {
	Action string `json:"action"`
	Denied bool   `json:"denied"`
	Errno  string `json:"errno,omitempty"`
}

// drillHook is set only in binaries built with the escapedrill tag
// (drill_escapedrill.go): a job whose source starts with drillPrefix runs
// the escape drill natively instead of JavaScript. In every other binary a
// source like that is an ordinary comment.
var drillHook func(spec string) json.RawMessage

// drillPrefix starts the source of an escape-drill job.
const drillPrefix = "//escape-drill "
