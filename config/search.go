package config

import (
	"time"
)

// SearchConfig configures search_tools beyond its lexical ranking.
type SearchConfig struct {
	// Embeddings, when its URL is set, fuses search_tools' lexical
	// ranking with an embeddings endpoint's.
	Embeddings EmbeddingsConfig `koanf:"embeddings"`
}

// EmbeddingsConfig is an OpenAI-compatible embeddings endpoint (POST
// /v1/embeddings, as Ollama, vLLM, TEI and LiteLLM serve it).
type EmbeddingsConfig struct {
	// URL is the endpoint, e.g. http://127.0.0.1:11434/v1/embeddings; a
	// path that does not end in /embeddings gets it appended (an OpenAI
	// base URL such as …/v1 works). Empty: search is lexical only.
	// ${VAR} references are expanded.
	URL string `koanf:"url"`
	// Model is the model the endpoint embeds with; required with URL.
	Model string `koanf:"model"`
	// Headers are sent with every request (e.g. Authorization); ${VAR}
	// references in values are expanded.
	Headers map[string]string `koanf:"headers"`
	// Dimensions, when positive, is asked of the endpoint (models that
	// can shorten their vectors) and required of every vector; 0: the
	// model's own.
	Dimensions int `koanf:"dimensions"`
	// Timeout bounds how long a search waits for its query's vector
	// before answering by words only. Default 1s.
	Timeout time.Duration `koanf:"timeout"`
	// BatchSize is how many tool descriptions one request embeds.
	// Default 32.
	BatchSize int `koanf:"batch_size"`
}

// Bounds of search.embeddings.
const (
	// DefaultEmbeddingsTimeout is the default of EmbeddingsConfig.Timeout.
	DefaultEmbeddingsTimeout = time.Second
	// DefaultEmbeddingsBatchSize is the default of EmbeddingsConfig.BatchSize.
	DefaultEmbeddingsBatchSize = 32
	// MaxEmbeddingsDimensions bounds EmbeddingsConfig.Dimensions.
	MaxEmbeddingsDimensions = 16384
)

// validateSearch checks search.embeddings.
func (c *collector) validateSearch(s *SearchConfig, skip map[string]bool) {
	e := s.Embeddings
	if e.URL != "" && !skip["search.embeddings.url"] {
		c.checkURL("search.embeddings.url", e.URL)
		if e.Model == "" {
			c.add("search.embeddings.model", "required with search.embeddings.url (the model the endpoint embeds with)")
		}
	}
	for _, k := range sortedKeys(e.Headers) {
		if !validHeaderName(k) {
			c.add(joinKey("search.embeddings.headers", k), "not a valid HTTP header name")
		} else if containsLineBreak(e.Headers[k]) {
			c.add(joinKey("search.embeddings.headers", k), "header value must not contain line breaks")
		}
	}
	c.between("search.embeddings.dimensions", int64(e.Dimensions), 0, MaxEmbeddingsDimensions)
	c.durationBetween("search.embeddings.timeout", e.Timeout, time.Minute)
	c.between("search.embeddings.batch_size", int64(e.BatchSize), 1, 2048)
}

// expandSearch applies ${VAR} expansion to search.embeddings.url and its
// headers' values.
func (c *collector) expandSearch(s *SearchConfig, one func(key string, s *string, report bool)) {
	one("search.embeddings.url", &s.Embeddings.URL, true)
	for _, k := range sortedKeys(s.Embeddings.Headers) {
		v := s.Embeddings.Headers[k]
		one(joinKey("search.embeddings.headers", k), &v, true)
		s.Embeddings.Headers[k] = v
	}
}

func containsLineBreak(s string) bool {
	for _, r := range s {
		if r == '\r' || r == '\n' {
			return true
		}
	}
	return false
}
