package procpool

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ConfinementMode says how hard a pool confines its worker processes.
type ConfinementMode string

// The confinement modes ([Options].Confinement).
const (
	// ConfinementBestEffort applies every layer the host supports and
	// reports what it got (the default).
	ConfinementBestEffort ConfinementMode = "best-effort"
	// ConfinementStrict refuses to start a worker that lacks a layer:
	// namespaces, no capabilities, Landlock's filesystem rules or seccomp.
	ConfinementStrict ConfinementMode = "strict"
	// ConfinementOff applies none of the layers (the basic hardening of
	// every worker stays: empty environment, no inherited descriptors,
	// no_new_privs, no core dumps).
	ConfinementOff ConfinementMode = "off"
)

// The layers of a worker's confinement, in [Confinement].Layers order.
const (
	LayerNamespaces   = "namespaces"
	LayerLandlock     = "landlock"
	LayerSeccomp      = "seccomp"
	LayerCapabilities = "capabilities"
	LayerRlimits      = "rlimits"
	LayerThreads      = "threads"
)

// The levels a layer can reach.
const (
	// LevelOn: the layer is in force as designed.
	LevelOn = "on"
	// LevelPartial: in force, but weaker than designed on this host (see
	// the detail).
	LevelPartial = "partial"
	// LevelUnavailable: the host refused it.
	LevelUnavailable = "unavailable"
	// LevelOff: not asked for (ConfinementOff).
	LevelOff = "off"
)

// Layer is one layer of confinement and the level a worker obtained.
type Layer struct {
	Name   string `json:"name"`
	Level  string `json:"level"`
	Detail string `json:"detail,omitempty"`
}

// Confinement is what confinement the pool's workers obtained on this host,
// layer by layer (see the package documentation).
type Confinement struct {
	Mode   ConfinementMode `json:"mode"`
	Layers []Layer         `json:"layers"`
}

// Level returns the level of the named layer ("" if unknown).
func (c Confinement) Level(name string) string {
	for _, l := range c.Layers {
		if l.Name == name {
			return l.Level
		}
	}
	return ""
}

// String is the one-line summary logged at start, e.g.
// "strict: namespaces=on landlock=on seccomp=on capabilities=on rlimits=on".
func (c Confinement) String() string {
	var b strings.Builder
	b.WriteString(string(c.Mode))
	b.WriteString(":")
	for _, l := range c.Layers {
		fmt.Fprintf(&b, " %s=%s", l.Name, l.Level)
	}
	return b.String()
}

// missing returns the layers strict mode requires and c lacks: every layer
// fully, except Landlock, whose filesystem rules suffice (TCP rules and
// scopes come with newer ABIs; the network namespace and seccomp cover
// them), and the thread bound, which only a worker mapped to a uid other
// than the host's root can get (a root gateway whose binary uid 65534
// cannot execute maps its workers to root; see nsLevels): it is logged
// as unavailable then.
func (c Confinement) missing() []string {
	var out []string
	for _, l := range c.Layers {
		tolerated := l.Name == LayerLandlock && l.Level == LevelPartial || l.Name == LayerThreads && l.Level == LevelUnavailable
		if l.Level != LevelOn && !tolerated {
			out = append(out, l.Name+" "+l.Level+detailSuffix(l.Detail))
		}
	}
	return out
}

func detailSuffix(d string) string {
	if d == "" {
		return ""
	}
	return " (" + d + ")"
}

// allNamespaces are the namespaces a fully confined worker gets.
var allNamespaces = []string{"user", "net", "mount", "pid", "ipc"}

// nsLevel is one way of spawning a worker: the namespaces it gets.
type nsLevel struct {
	names            []string
	flags            uintptr
	hostUID, hostGID int  // what the worker's id maps to outside its user namespace
	privileged       bool // the gateway may map ids other than its own
	why              string
}

// workerFacts is what a worker reports about its own confinement in its
// ready frame, before it runs any program.
type workerFacts struct {
	CapsEmpty    bool   `json:"caps_empty"`
	BoundingLeft int    `json:"bounding_left,omitempty"`
	UID          int    `json:"uid"`
	Rlimits      bool   `json:"rlimits"`
	LandlockABI  int    `json:"landlock_abi,omitempty"`
	LandlockFS   bool   `json:"landlock_fs,omitempty"`
	LandlockNet  bool   `json:"landlock_net,omitempty"`
	LandlockScop bool   `json:"landlock_scoped,omitempty"`
	LandlockErr  string `json:"landlock_err,omitempty"`
	Seccomp      bool   `json:"seccomp"`
	MaxThreads   int    `json:"max_threads,omitempty"` // RLIMIT_NPROC set, 0 if none
	SeccompNote  string `json:"seccomp_note,omitempty"`
	Errors       string `json:"errors,omitempty"`
}

// layerSet is which layers a worker is asked to apply itself; its String is
// the worker's "confine=" argument.
type layerSet struct{ caps, rlimits, landlock, seccomp, threads bool }

var allWorkerLayers = layerSet{caps: true, rlimits: true, landlock: true, seccomp: true, threads: true}

// forWorker is the set a worker spawned with the namespaces of ns applies:
// the thread bound only where it binds (see threadBound).
func (s layerSet) forWorker(ns nsLevel) layerSet {
	if _, ok := threadBound(ns); !ok {
		s.threads = false
	}
	return s
}

// threadBound says whether RLIMIT_NPROC bounds the threads of one worker
// spawned with the namespaces of ns, and why not. The kernel counts a
// limit against every task of the caller's uid within its user namespace
// (threads included), and does not apply it at all to uid 0 of the host:
// only a worker in a user namespace of its own, mapped to a uid other than
// the host's root, counts its own threads and nothing else. Elsewhere the
// count would take in the gateway's threads, its backends or other
// workers (one worker could starve the others), so no limit is set.
func threadBound(ns nsLevel) (why string, ok bool) {
	switch {
	case !slices.Contains(ns.names, "user"):
		return "no user namespace of its own: RLIMIT_NPROC would count every process of its uid", false
	case ns.hostUID == 0:
		return "uid 0 on the host, which RLIMIT_NPROC does not bind", false
	}
	return "", true
}

func (s layerSet) String() string {
	var l []string
	for _, x := range []struct {
		on   bool
		name string
	}{{s.caps, "caps"}, {s.rlimits, "rlimits"}, {s.landlock, "landlock"}, {s.seccomp, "seccomp"}, {s.threads, "threads"}} {
		if x.on {
			l = append(l, x.name)
		}
	}
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}

// confinement combines what the parent did (namespaces) with what a worker
// reported.
func confinement(mode ConfinementMode, want layerSet, ns nsLevel, f *workerFacts, cgroup, cgroupWhy string) Confinement {
	c := Confinement{Mode: mode}
	add := func(name, level, detail string) {
		c.Layers = append(c.Layers, Layer{Name: name, Level: level, Detail: detail})
	}
	if mode == ConfinementOff {
		for _, n := range []string{LayerNamespaces, LayerLandlock, LayerSeccomp, LayerCapabilities, LayerRlimits, LayerThreads} {
			add(n, LevelOff, "")
		}
		return c
	}
	if f == nil {
		f = &workerFacts{}
	}
	switch {
	case len(ns.names) == len(allNamespaces):
		add(LayerNamespaces, LevelOn, strings.Join(ns.names, ","))
	case len(ns.names) > 0:
		add(LayerNamespaces, LevelPartial, strings.Join(ns.names, ",")+"; "+ns.why)
	default:
		add(LayerNamespaces, LevelUnavailable, ns.why)
	}
	switch {
	case !want.landlock:
		add(LayerLandlock, LevelOff, "")
	case f.LandlockFS && f.LandlockNet && f.LandlockScop:
		add(LayerLandlock, LevelOn, fmt.Sprintf("ABI %d: no filesystem, no TCP bind/connect, signals and abstract sockets scoped", f.LandlockABI))
	case f.LandlockFS:
		what := "no filesystem"
		if f.LandlockNet {
			what += ", no TCP bind/connect"
		} else {
			what += "; TCP rules need ABI 4"
		}
		add(LayerLandlock, LevelPartial, fmt.Sprintf("ABI %d: %s; signal scoping needs ABI 6", f.LandlockABI, what))
	default:
		add(LayerLandlock, LevelUnavailable, f.LandlockErr)
	}
	switch {
	case !want.seccomp:
		add(LayerSeccomp, LevelOff, "")
	case f.Seccomp:
		add(LayerSeccomp, LevelOn, f.SeccompNote)
	default:
		add(LayerSeccomp, LevelUnavailable, f.SeccompNote)
	}
	switch {
	case !want.caps:
		add(LayerCapabilities, LevelOff, "")
	case f.CapsEmpty && f.UID != 0:
		add(LayerCapabilities, LevelOn, fmt.Sprintf("all sets empty, uid %d", f.UID))
	case f.CapsEmpty:
		add(LayerCapabilities, LevelPartial, "all sets empty, but uid 0")
	default:
		add(LayerCapabilities, LevelPartial, fmt.Sprintf("%d capabilities left in the bounding set (no CAP_SETPCAP to drop them; no_new_privs keeps them unusable)", f.BoundingLeft))
	}
	switch {
	case !want.rlimits:
		add(LayerRlimits, LevelOff, "")
	case f.Rlimits:
		add(LayerRlimits, LevelOn, fmt.Sprintf("fsize 0, nofile %d, memlock 0, core 0", workerNoFile))
	default:
		add(LayerRlimits, LevelUnavailable, f.Errors)
	}
	if !want.threads {
		add(LayerThreads, LevelOff, "")
		return c
	}
	// Two bounds, either suffices: RLIMIT_NPROC and a pids cgroup.
	var held, lacking []string
	switch why, bound := threadBound(ns); {
	case !bound:
		lacking = append(lacking, "RLIMIT_NPROC: "+why)
	case f.MaxThreads > 0:
		held = append(held, fmt.Sprintf("RLIMIT_NPROC %d, counted in its own user namespace", f.MaxThreads))
	default:
		lacking = append(lacking, "RLIMIT_NPROC: "+f.Errors)
	}
	if cgroup != "" {
		held = append(held, "a pids cgroup of its own under "+filepath.Dir(cgroup))
	} else {
		lacking = append(lacking, "pids cgroup: "+cgroupWhy)
	}
	if len(held) > 0 {
		add(LayerThreads, LevelOn, fmt.Sprintf("at most %d threads and processes (%s)", workerMaxThreads, strings.Join(held, "; ")))
	} else {
		add(LayerThreads, LevelUnavailable, strings.Join(lacking, "; "))
	}
	return c
}
