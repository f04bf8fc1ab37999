package app

import (
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/isogate/isogate/config"
	"github.com/isogate/isogate/internal/backend"
	"github.com/isogate/isogate/internal/surface"
)

// ReloadResult is what a reload did: the backends it added, removed and
// restarted, the changed keys it applied and the changed keys that take
// effect only after a restart.
type ReloadResult struct {
	backend.UpdateResult
	// Applied are the changed keys in force now ("backends.<name>" for a
	// backend's settings, "server.auth_token", "server.auth.rules").
	Applied []string
	// NeedRestart are the changed keys a reload does not apply.
	NeedRestart []string
	// Repointed are the plain tool and prompt names that reach another
	// backend since the reload (a tool denied on the backend that had the
	// name, a priority or the order of the backends changed). A backend
	// the reload added or restarted may re-point more names when its tools
	// arrive: the surface logs those as they happen.
	Repointed []surface.Repoint
}

// The server keys a reload applies: the token, and the principals' rules
// (a rule that denies a tool holds from the next call on, in every
// session and in runs under way: each call is decided when it is made).
const (
	authTokenKey = "server.auth_token"
	authRulesKey = "server.auth.rules"
)

// classify splits changed keys into those a reload applies (the backends,
// server.auth_token and server.auth.rules) and those that need a restart.
func classify(keys []string) (applied, restart []string) {
	for _, k := range keys {
		if k == authTokenKey || k == authRulesKey || k == "backends" || strings.HasPrefix(k, "backends.") {
			applied = append(applied, k)
		} else {
			restart = append(restart, k)
		}
	}
	return applied, restart
}

// changedKeys lists the configuration keys whose values differ between a
// and b, as written in a configuration file (koanf tags), sorted; a
// backend counts as one key, backends.<name>.
func changedKeys(a, b *config.Config) []string {
	var keys []string
	diff(reflect.ValueOf(*a), reflect.ValueOf(*b), "", &keys)
	for _, name := range union(a.Backends, b.Backends) {
		if !reflect.DeepEqual(a.Backends[name], b.Backends[name]) {
			keys = append(keys, "backends."+name)
		}
	}
	sort.Strings(keys)
	return keys
}

// diff walks two values of one struct type by koanf tag.
func diff(a, b reflect.Value, prefix string, keys *[]string) {
	t := a.Type()
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("koanf")
		if tag == "" || tag == "-" || (prefix == "" && tag == "backends") {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() == reflect.Struct && fa.Type().PkgPath() == t.PkgPath() {
			diff(fa, fb, key, keys)
		} else if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			*keys = append(*keys, key)
		}
	}
}

func union(a, b map[string]config.Backend) []string {
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
