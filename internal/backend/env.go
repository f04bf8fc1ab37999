package backend

import (
	"maps"
	"slices"
	"strings"
)

// baseEnvNames are the variables a stdio backend inherits from the gateway
// by default: what a program needs to find executables, its home, user,
// locale, terminal and temporary directory. Everything else (API keys and
// tokens meant for other backends, the gateway's own ISOGATE_* settings)
// stays with the gateway unless the backend's Env passes it on explicitly.
var baseEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"TERM": true, "LANG": true, "LANGUAGE": true, "TZ": true,
	"TMPDIR": true, "TMP": true, "TEMP": true,
	"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true,
	"XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true,
	// Windows equivalents.
	"SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true,
	"USERPROFILE": true, "USERNAME": true, "APPDATA": true, "LOCALAPPDATA": true,
	"PROGRAMDATA": true, "PROGRAMFILES": true, "HOMEDRIVE": true, "HOMEPATH": true,
}

// gatewayPrefix marks the gateway's own settings, which never reach a
// backend from the gateway's environment, not even with InheritEnv.
const gatewayPrefix = "ISOGATE_"

// inheritedEnv reports whether the variable name passes from the gateway's
// environment to a stdio backend.
func inheritedEnv(name string, inheritAll bool) bool {
	up := strings.ToUpper(name)
	switch {
	case strings.HasPrefix(up, gatewayPrefix):
		return false
	case inheritAll:
		return true
	}
	return baseEnvNames[up] || strings.HasPrefix(up, "LC_")
}

// backendEnv returns the environment of a stdio backend: the inherited
// part of environ (os.Environ form), then extra in key order, so extra
// wins (os/exec keeps the last duplicate).
func backendEnv(environ []string, inheritAll bool, extra map[string]string) []string {
	env := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if inheritedEnv(name, inheritAll) {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}
