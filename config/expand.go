package config

import (
	"fmt"
	"strings"
)

// expandVars replaces each ${NAME} in s with the value lookup gives NAME.
// "$${" stands for a literal "${" and any other "$" is kept as it is. It
// returns the names that were not set (they expand to ""), and an error for
// a malformed reference.
func expandVars(s string, lookup func(string) (string, bool)) (string, []string, error) {
	if !strings.Contains(s, "$") {
		return s, nil, nil
	}
	var (
		b     strings.Builder
		unset []string
	)
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return s, nil, fmt.Errorf(`unterminated variable reference %q (missing "}")`, s[i:])
			}
			name := s[i+2 : i+end]
			if !validVarName(name) {
				return s, nil, fmt.Errorf(`invalid variable reference %q: only ${NAME} is supported, NAME being letters, digits and underscores (write "$${" for a literal "${")`, s[i:i+end+1])
			}
			v, ok := lookup(name)
			if !ok {
				unset = append(unset, name)
			}
			b.WriteString(v)
			i += end + 1
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), unset, nil
}

func validVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// expand applies ${VAR} expansion to the fields that support it. Unset
// variables are reported, except in disabled backends, which are not
// started. It returns the keys whose value has a problem.
func (c *collector) expand(cfg *Config, lookup func(string) (string, bool)) map[string]bool {
	bad := map[string]bool{}
	one := func(key string, s *string, report bool) {
		v, unset, err := expandVars(*s, lookup)
		if err != nil {
			c.add(key, err.Error())
			bad[key] = true
			return
		}
		*s = v
		if len(unset) > 0 {
			bad[key] = true
		}
		if !report {
			return
		}
		for _, name := range unset {
			c.add(key, fmt.Sprintf("environment variable %s is not set", name))
		}
	}

	one("server.auth_token", &cfg.Server.AuthToken, true)
	one("telemetry.otlp_endpoint", &cfg.Telemetry.OTLPEndpoint, true)
	one("store.redis_url", &cfg.Store.RedisURL, true)
	one("store.data_dir", &cfg.Store.DataDir, true)
	one("store.hmac_key", &cfg.Store.HMACKey, true)
	one("store.token_key", &cfg.Store.TokenKey, true)
	c.expandSearch(&cfg.Search, one)
	one("server.auth.introspection_client_secret", &cfg.Server.Auth.IntrospectionClientSecret, true)
	for _, name := range sortedKeys(cfg.Server.Auth.Tokens) {
		t := cfg.Server.Auth.Tokens[name]
		one(joinKey("server.auth.tokens", name)+".token", &t.Token, true)
		cfg.Server.Auth.Tokens[name] = t
	}
	for _, name := range sortedKeys(cfg.Backends) {
		b := cfg.Backends[name]
		key := joinKey("backends", name)
		report := !b.Disabled
		one(key+".command", &b.Command, report)
		for i := range b.Args {
			one(indexKey(key+".args", i), &b.Args[i], report)
		}
		for _, k := range sortedKeys(b.Env) {
			v := b.Env[k]
			one(joinKey(key+".env", k), &v, report)
			b.Env[k] = v
		}
		one(key+".url", &b.URL, report)
		for _, k := range sortedKeys(b.Headers) {
			v := b.Headers[k]
			one(joinKey(key+".headers", k), &v, report)
			b.Headers[k] = v
		}
		one(key+".auth.issuer", &b.Auth.Issuer, report)
		one(key+".auth.token_url", &b.Auth.TokenURL, report)
		one(key+".auth.client_id", &b.Auth.ClientID, report)
		one(key+".auth.client_secret", &b.Auth.ClientSecret, report)
		cfg.Backends[name] = b
	}
	return bad
}
