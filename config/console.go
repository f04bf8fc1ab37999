package config

import "time"

// DefaultConsoleSessionTTL is the default of server.console.session_ttl.
const DefaultConsoleSessionTTL = 8 * time.Hour

// ConsoleConfig configures the operator's web console at /console on the
// HTTP listener (server.console).
type ConsoleConfig struct {
	// Enabled serves /console. Default false.
	Enabled bool `koanf:"enabled"`
	// Admins are the principals who may use the console: principal names
	// as server.auth names them, "group:<name>" for the members of a group
	// or "scope:<name>" for holders of an OAuth scope. Empty: the
	// principals of server.auth.admins. Without authentication (mode none,
	// loopback only) every local browser may use it.
	Admins []string `koanf:"admins"`
	// SessionTTL is how long a console sign-in lasts. Default 8h.
	SessionTTL time.Duration `koanf:"session_ttl"`
}

// validateConsole checks server.console.
func (c *collector) validateConsole(s *ServerConfig) {
	k := &s.Console
	c.names("server.console.admins", k.Admins)
	c.durationBetween("server.console.session_ttl", k.SessionTTL, 7*24*time.Hour)
	if !k.Enabled || s.EffectiveMode() == AuthNone {
		return
	}
	if len(k.Admins) == 0 && len(s.Auth.Admins) == 0 {
		c.add("server.console.admins", "is empty and so is server.auth.admins: name the principals who may use the console (e.g. admins: [alice] or [\"scope:isogate.admin\"])")
	}
}
