// Package kubernetes holds the Kubernetes manifests (YAML) and a test that
// checks their key fields, since no cluster runs in CI.
package kubernetes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/isogate/isogate/config"
)

// doc is a generic manifest document.
type doc = map[string]any

// get walks keys (string for maps, int for lists) into d; nil if absent.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// load reads every document of the manifests kustomization.yaml lists,
// keyed by kind/name.
func load(t *testing.T) map[string]doc {
	t.Helper()
	var kust struct{ Resources []string }
	raw, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	docs := map[string]doc{}
	for _, f := range kust.Resources {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("kustomization lists %s: %v", f, err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var d doc
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			key, _ := d["kind"].(string)
			name, _ := get(d, "metadata", "name").(string)
			docs[key+"/"+name] = d
		}
	}
	return docs
}

func TestManifests(t *testing.T) {
	docs := load(t)
	dep, ok := docs["Deployment/isogate"]
	if !ok {
		t.Fatalf("no Deployment isogate among %v", docs)
	}
	if r := get(dep, "spec", "replicas"); r != 2 {
		t.Errorf("gateway replicas = %v, want 2", r)
	}
	c := get(dep, "spec", "template", "spec", "containers", 0)
	if p := get(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
		t.Errorf("readiness probe path = %v, want /readyz", p)
	}
	ann := get(dep, "spec", "template", "metadata", "annotations")
	if get(ann, "prometheus.io/scrape") != "true" || get(ann, "prometheus.io/path") != "/metrics" || get(ann, "prometheus.io/port") != "8787" {
		t.Errorf("Prometheus scrape annotations = %v", ann)
	}
	env := map[string]any{}
	for _, e := range get(c, "env").([]any) {
		env[get(e, "name").(string)] = e
	}
	if get(env["ISOGATE_TOKEN"], "valueFrom", "secretKeyRef", "name") != "isogate-token" {
		t.Errorf("ISOGATE_TOKEN does not come from the isogate-token Secret: %v", env["ISOGATE_TOKEN"])
	}
	if _, ok := docs["Secret/isogate-token"]; !ok {
		t.Error("no Secret isogate-token")
	}
	for _, svc := range []string{"Service/isogate", "Service/isogate-redis", "Deployment/isogate-redis"} {
		if _, ok := docs[svc]; !ok {
			t.Errorf("no %s", svc)
		}
	}
	redisURL, _ := get(env["ISOGATE_REDIS_URL"], "value").(string)
	if redisURL != "redis://:$(REDIS_PASSWORD)@isogate-redis:6379/0" {
		t.Errorf("ISOGATE_REDIS_URL = %q, want the isogate-redis Service with the password", redisURL)
	}
	// Issue 25 (6): Redis has a password from a Secret, only the gateway
	// reaches it, and its entries are authenticated.
	for _, name := range []string{"REDIS_PASSWORD", "ISOGATE_HMAC_KEY"} {
		if get(env[name], "valueFrom", "secretKeyRef", "name") != "isogate-redis" {
			t.Errorf("%s does not come from the isogate-redis Secret: %v", name, env[name])
		}
	}
	if _, ok := docs["Secret/isogate-redis"]; !ok {
		t.Error("no Secret isogate-redis")
	}
	rc := get(docs["Deployment/isogate-redis"], "spec", "template", "spec", "containers", 0)
	args := fmt.Sprint(get(rc, "args"))
	if !strings.Contains(args, "--requirepass $(REDIS_PASSWORD)") ||
		get(rc, "env", 0, "valueFrom", "secretKeyRef", "name") != "isogate-redis" {
		t.Errorf("Redis runs without the Secret's password: args %s", args)
	}
	np, ok := docs["NetworkPolicy/isogate-redis"]
	if !ok {
		t.Fatal("no NetworkPolicy isogate-redis")
	}
	if get(np, "spec", "podSelector", "matchLabels", "app.kubernetes.io/name") != "isogate-redis" ||
		get(np, "spec", "ingress", 0, "from", 0, "podSelector", "matchLabels", "app.kubernetes.io/name") != "isogate" ||
		get(np, "spec", "ingress", 0, "ports", 0, "port") != 6379 {
		t.Errorf("the NetworkPolicy does not limit Redis to the gateway's pods: %v", np)
	}
	redisURL = "redis://:pw@isogate-redis:6379/0" // as the kubelet expands it

	// The ConfigMap's isogate.yaml is a valid configuration in stateless
	// mode on Redis, with the container's environment.
	text, _ := get(docs["ConfigMap/isogate-config"], "data", "isogate.yaml").(string)
	path := filepath.Join(t.TempDir(), "isogate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"ISOGATE_TOKEN": "t0ken", "ISOGATE_REDIS_URL": redisURL, "ISOGATE_HMAC_KEY": "0123456789abcdef0123", "HOME": t.TempDir()}
	cfg, err := config.Load(config.LoadOptions{Path: path, LookupEnv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("the ConfigMap's isogate.yaml: %v", err)
	}
	if !cfg.Server.Stateless || cfg.Store.RedisURL != redisURL || cfg.Store.HMACKey != "0123456789abcdef0123" || cfg.Server.AuthToken != "t0ken" || cfg.Server.HTTP != "0.0.0.0:8787" {
		t.Errorf("config: stateless=%v redis_url=%q token=%q http=%q", cfg.Server.Stateless, cfg.Store.RedisURL, cfg.Server.AuthToken, cfg.Server.HTTP)
	}
}

// TestDockerfile checks what the image promises: a cgo build stage, and a
// runtime with node/npx for stdio backends, running as a non-root user.
func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, want := range []string{"AS build", "CGO_ENABLED=1", "FROM node:", "COPY --from=build", "USER 10001", "EXPOSE 8787"} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Count(s, "\nFROM ")+strings.Count(s[:5], "FROM ") < 2 {
		t.Error("Dockerfile is not multi-stage")
	}
}
