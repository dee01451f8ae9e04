package agent

import (
	"bytes"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// replacedWhole reports the message types an override replaces instead of
// merging field by field: generation parameters (agent-core's
// `provider`), an output format, durations and free-form JSON.
func replacedWhole(n protoreflect.FullName) bool {
	switch n {
	case "agentcore.v1.ProviderOptions", "agentcore.v1.OutputFormat", "google.protobuf.Duration", "google.protobuf.Struct":
		return true
	}
	return false
}

// MergeConfig returns base with the fields set in override merged over it,
// agent-core's override rule: a set scalar replaces, `provider` (and
// compact.provider), `output`, durations and JSON objects replace whole,
// `cache`, `capabilities` and `compact` merge field by field. Neither
// argument is changed; either may be nil.
func MergeConfig(base, override *agentv1.AgentConfig) *agentv1.AgentConfig {
	out := &agentv1.AgentConfig{}
	if base != nil {
		out = proto.Clone(base).(*agentv1.AgentConfig)
	}
	if override != nil {
		merge(out.ProtoReflect(), override.ProtoReflect())
	}
	return out
}

// merge sets every populated field of src in dst, copied: dst shares no
// message, list, map or bytes with src.
func merge(dst, src protoreflect.Message) {
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() || fd.IsMap():
			// Copied through a message holding that field alone.
			one := src.New()
			one.Set(fd, v)
			dst.Set(fd, proto.Clone(one.Interface()).ProtoReflect().Get(fd))
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			if replacedWhole(fd.Message().FullName()) {
				dst.Set(fd, protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect()))
			} else {
				merge(dst.Mutable(fd).Message(), v.Message())
			}
		case fd.Kind() == protoreflect.BytesKind:
			dst.Set(fd, protoreflect.ValueOfBytes(bytes.Clone(v.Bytes())))
		default: // scalars and strings are values
			dst.Set(fd, v)
		}
		return true
	})
}

// hasAPIKey reports whether c holds an API key (main, compaction or a
// fallback's).
func hasAPIKey(c *agentv1.AgentConfig) bool {
	if c.GetApiKey() != "" || c.GetCompact().GetApiKey() != "" {
		return true
	}
	for _, m := range c.GetFallback().GetModels() {
		if m.GetApiKey() != "" {
			return true
		}
	}
	return false
}

// resolve turns a stored config (merged with overrides) into the model
// layer's config: profiles expanded by the session's ExpandProfile, defaults
// applied, every field checked. needEndpoint also requires a base URL and
// model (not needed with a caller's eino model). Bad fields are a
// *ValidationError.
func (s *Session) resolve(stored *agentv1.AgentConfig, needEndpoint bool) (*llm.Config, error) {
	var problems violations
	// The expander also fills in a default profile a config names none of.
	if s.opts.ExpandProfile != nil {
		exp, err := s.opts.ExpandProfile(stored)
		if err != nil {
			if err := problems.addErr(err, "history"); err != nil {
				problems.add("config.profile", "%v", err)
			}
			return nil, problems.err()
		}
		stored = exp
	} else {
		if stored.GetProfile() != "" {
			problems.add("config.profile", "profiles are not available here")
		}
		if stored.GetCompact().GetProfile() != "" {
			problems.add("config.compact.profile", "profiles are not available here")
		}
		for i, m := range stored.GetFallback().GetModels() {
			if m.GetProfile() != "" {
				problems.add(secret.FallbackPath(i)+"profile", "profiles are not available here")
			}
		}
		if len(problems) > 0 {
			return nil, problems.err()
		}
	}
	cfg, err := llm.ResolveConfig(stored)
	if err != nil {
		if err := problems.addErr(err, "history"); err != nil {
			return nil, err
		}
		return nil, problems.err()
	}
	if limit := int64(s.opts.MaxToolOutput); limit > 0 && (cfg.MaxToolOutput == 0 || cfg.MaxToolOutput > limit) {
		cfg.MaxToolOutput = limit
	}
	if limit := s.opts.MaxLiveOutput; limit > 0 && (cfg.MaxLiveOutput == 0 || cfg.MaxLiveOutput > limit) {
		cfg.MaxLiveOutput = limit
	}
	if needEndpoint && s.opts.Model == nil {
		if err := problems.addErr(cfg.RequireEndpoint(), "history"); err != nil {
			return nil, err
		}
		if len(problems) > 0 {
			return nil, problems.err()
		}
	}
	return cfg, nil
}
