package backend

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/isogate/isogate/config"
)

// redacted replaces a secret in a message.
const redacted = "xxxxx"

// urlPattern finds URLs in free text (an error message).
var urlPattern = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// Redact removes a backend's secrets from a message before it leaves the
// gateway (status, /readyz, isogate://backends, errors a program sees,
// logs): the values of its configured headers, the password and the query
// values of its URL, and, in every URL the message holds, the userinfo
// password and every query value (query keys stay, so the message still
// says which parameter was sent).
func Redact(msg string, b config.Backend) string {
	if msg == "" {
		return msg
	}
	var secrets []string
	for _, v := range b.Headers {
		secrets = append(secrets, v)
		if _, after, ok := strings.Cut(v, " "); ok { // "Bearer <token>"
			secrets = append(secrets, after)
		}
	}
	if u, err := url.Parse(b.URL); err == nil && b.URL != "" {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.QueryEscape(p), url.PathEscape(p))
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				secrets = append(secrets, v, url.QueryEscape(v))
			}
		}
	}
	for _, s := range secrets {
		if len(strings.TrimSpace(s)) >= 3 { // shorter values would blank out ordinary words
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	return urlPattern.ReplaceAllStringFunc(msg, RedactURL)
}

// RedactURL returns raw with its userinfo password and every query value
// replaced by xxxxx; raw unchanged when it has neither (or does not parse).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
		changed = true
	}
	if u.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(u.RawQuery, "&") {
			k, _, hasValue := strings.Cut(kv, "=")
			if hasValue {
				kv = k + "=" + redacted
			}
			parts = append(parts, kv)
		}
		u.RawQuery = strings.Join(parts, "&")
		changed = true
	}
	if !changed {
		return raw
	}
	return u.String()
}
