package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// cacheFor resolves the cache setting of one request; the default key is
// derived from base URL, model and system prompt, so consecutive requests of
// one agent share it.
func cacheFor(cfg *Config) provider.Cache {
	if !cfg.Cache.Enabled {
		return provider.Cache{}
	}
	out := provider.Cache{Enabled: true, Key: cfg.Cache.Key, Retention: cfg.Cache.Retention}
	if out.Key == "" {
		out.Key = DefaultCacheKey(cfg.BaseURL, cfg.Model, cfg.System)
	}
	return out
}

// DefaultCacheKey is the prompt cache key used when none is configured: a
// stable hash of base URL, model and system prompt.
func DefaultCacheKey(baseURL, model, system string) string {
	h := sha256.New()
	for _, s := range []string{strings.TrimRight(baseURL, "/"), model, system} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "agentcore-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// requestBody is the extra request body of one request: cache.body when
// caching is on, then provider.body over it. pkg/llm merges the two itself
// (and sends Cache.Body empty) so that cache.body reaches every protocol, as
// in agent-core, and provider.body wins over it and over the cache key.
func requestBody(cfg *Config) map[string]any {
	if !cfg.Cache.Enabled || len(cfg.Cache.Body) == 0 {
		return cfg.Provider.Body
	}
	out := make(map[string]any, len(cfg.Cache.Body)+len(cfg.Provider.Body))
	for k, v := range cfg.Cache.Body {
		out[k] = v
	}
	for k, v := range cfg.Provider.Body {
		out[k] = v
	}
	return out
}
