// Package secret handles the secrets of an agent's config: its API keys and
// header values, which are never stored: their paths, their values, a
// config without them and one with them put back.
package secret

import (
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The secrets of a config are its API keys (config.api_key,
// config.compact.api_key, config.fallback.models[i].api_key) and its
// header values (config.provider.headers, config.compact.provider.headers,
// config.fallback.models[i].provider.headers): Redact clears them, Paths names
// them by path, Values lists their values, and With puts them
// back into a config that was stored without them.

// Redact returns a copy of c without secrets: API keys cleared and header
// values emptied (their names kept).
func Redact(c *agentv1.AgentConfig) *agentv1.AgentConfig {
	if c == nil {
		return nil
	}
	out := proto.Clone(c).(*agentv1.AgentConfig)
	out.ApiKey = nil
	if cc := out.GetCompact(); cc != nil {
		cc.ApiKey = nil
		redactHeaders(cc.GetProvider())
	}
	redactHeaders(out.GetProvider())
	for _, m := range out.GetFallback().GetModels() {
		m.ApiKey = nil
		redactHeaders(m.GetProvider())
	}
	return out
}

func redactHeaders(p *agentv1.ProviderOptions) {
	for k := range p.GetHeaders() {
		p.Headers[k] = ""
	}
}

// Paths names the fields of c that hold secrets: API keys and header
// values. They are never written to the store.
func Paths(c *agentv1.AgentConfig) []string {
	var out []string
	if c.GetApiKey() != "" {
		out = append(out, "config.api_key")
	}
	if c.GetCompact().GetApiKey() != "" {
		out = append(out, "config.compact.api_key")
	}
	headers := func(prefix string, h map[string]string) {
		keys := make([]string, 0, len(h))
		for k, v := range h {
			if v != "" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, prefix+k)
		}
	}
	headers("config.provider.headers.", c.GetProvider().GetHeaders())
	headers("config.compact.provider.headers.", c.GetCompact().GetProvider().GetHeaders())
	for i, m := range c.GetFallback().GetModels() {
		if m.GetApiKey() != "" {
			out = append(out, FallbackPath(i)+"api_key")
		}
		headers(FallbackPath(i)+"provider.headers.", m.GetProvider().GetHeaders())
	}
	return out
}

// FallbackPath is the path prefix of fallback model i's fields.
// FallbackPath is the path prefix of the i-th fallback model's fields.
func FallbackPath(i int) string { return "config.fallback.models[" + strconv.Itoa(i) + "]." }

// fallbackField splits the path of a fallback model's field into the
// model and the field under it ("api_key", "provider.headers.NAME").
func fallbackField(c *agentv1.AgentConfig, path string) (*agentv1.FallbackModel, string) {
	rest, ok := strings.CutPrefix(path, "config.fallback.models[")
	if !ok {
		return nil, ""
	}
	n, rest, ok := strings.Cut(rest, "].")
	i, err := strconv.Atoi(n)
	if !ok || err != nil || i < 0 || i >= len(c.GetFallback().GetModels()) {
		return nil, ""
	}
	return c.GetFallback().GetModels()[i], rest
}

// Value returns the value of a secret field of c ("" when unset).
func Value(c *agentv1.AgentConfig, path string) string {
	switch {
	case path == "config.api_key":
		return c.GetApiKey()
	case path == "config.compact.api_key":
		return c.GetCompact().GetApiKey()
	case strings.HasPrefix(path, "config.provider.headers."):
		return c.GetProvider().GetHeaders()[strings.TrimPrefix(path, "config.provider.headers.")]
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		return c.GetCompact().GetProvider().GetHeaders()[strings.TrimPrefix(path, "config.compact.provider.headers.")]
	}
	if m, field := fallbackField(c, path); m != nil {
		if field == "api_key" {
			return m.GetApiKey()
		}
		if name, ok := strings.CutPrefix(field, "provider.headers."); ok {
			return m.GetProvider().GetHeaders()[name]
		}
	}
	return ""
}

// setSecret sets a secret field of c.
func setSecret(c *agentv1.AgentConfig, path, v string) {
	switch {
	case path == "config.api_key":
		c.ApiKey = &v
	case path == "config.compact.api_key":
		if c.Compact == nil {
			c.Compact = &agentv1.CompactConfig{}
		}
		c.Compact.ApiKey = &v
	case strings.HasPrefix(path, "config.provider.headers."):
		if c.Provider != nil && c.Provider.Headers != nil {
			c.Provider.Headers[strings.TrimPrefix(path, "config.provider.headers.")] = v
		}
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		if p := c.GetCompact().GetProvider(); p != nil && p.Headers != nil {
			p.Headers[strings.TrimPrefix(path, "config.compact.provider.headers.")] = v
		}
	}
	if m, field := fallbackField(c, path); m != nil {
		if field == "api_key" {
			m.ApiKey = &v
		} else if name, ok := strings.CutPrefix(field, "provider.headers."); ok && m.GetProvider().GetHeaders() != nil {
			m.Provider.Headers[name] = v
		}
	}
}

// Given reports whether a send's config override supplies the secret
// field path: it sets the key, or replaces the provider options holding
// the header.
func Given(path string, o *agentv1.AgentConfig) bool {
	switch {
	case strings.HasPrefix(path, "config.provider.headers."):
		return o.GetProvider() != nil
	case strings.HasPrefix(path, "config.compact.provider.headers."):
		return o.GetCompact().GetProvider() != nil
	}
	if m, field := fallbackField(o, path); m != nil && strings.HasPrefix(field, "provider.headers.") {
		return m.GetProvider() != nil
	}
	return Value(o, path) != ""
}

// With returns stored (a config without secrets) with the values
// of paths copied from held, and the paths held has no value for.
func With(stored, held *agentv1.AgentConfig, paths []string) (*agentv1.AgentConfig, []string) {
	out := proto.Clone(stored).(*agentv1.AgentConfig)
	var missing []string
	for _, p := range paths {
		if v := Value(held, p); v != "" {
			setSecret(out, p, v)
		} else {
			missing = append(missing, p)
		}
	}
	return out, missing
}

// Values returns the secrets of a config: API keys and header values.
func Values(c *agentv1.AgentConfig) []string {
	var keys []string
	add := func(s string) {
		if s != "" {
			keys = append(keys, s)
		}
	}
	add(c.GetApiKey())
	add(c.GetCompact().GetApiKey())
	for _, v := range c.GetProvider().GetHeaders() {
		add(v)
	}
	for _, v := range c.GetCompact().GetProvider().GetHeaders() {
		add(v)
	}
	for _, m := range c.GetFallback().GetModels() {
		add(m.GetApiKey())
		for _, v := range m.GetProvider().GetHeaders() {
			add(v)
		}
	}
	return keys
}
