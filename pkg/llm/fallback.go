package llm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// FallbackConfig is what a round does when its model fails: the models it
// is asked of next, in order, and the error kinds that hand it on.
type FallbackConfig struct {
	Models []FallbackModel
	// On are the error kinds that hand a round on (DefaultFallbackOn when
	// the config names none).
	On []Kind
}

// FallbackModel is one fallback model. With a base URL (its own, or its
// profile's, which the server fills in before ResolveConfig) it is a model
// of its own: its key is APIKey alone, never the main model's. Without one
// it is the main model's endpoint and key with another model.
type FallbackModel struct {
	// Profile names a server profile; the server resolves it before ResolveConfig.
	Profile string
	BaseURL string
	APIKey  string
	Model   string
	// Protocol is empty when unset.
	Protocol provider.Protocol
	// Provider replaces the main provider options whole when non-nil.
	Provider *ProviderOptions
}

// DefaultFallbackOn returns the error kinds a round falls back on when the
// config names none: the model service failed or could not serve the
// request now, not the request or its key.
func DefaultFallbackOn() []Kind {
	return []Kind{KindServer, KindLimit, KindTimeout, KindNetwork}
}

// FallsBack returns the model error of a failed request when its kind is
// one the config falls back on. A structured answer that failed its schema
// never falls back: the model answered, and its answer is kept.
func (f *FallbackConfig) FallsBack(err error) (*Error, bool) {
	var e *Error
	if f == nil || len(f.Models) == 0 || !errors.As(err, &e) || e.Kind == KindAborted || errors.Is(err, ErrInvalidOutput) {
		return nil, false
	}
	on := f.On
	if len(on) == 0 {
		on = DefaultFallbackOn()
	}
	for _, k := range on {
		if e.Kind == k {
			return e, true
		}
	}
	return nil, false
}

// FallbackConfig returns the configuration of fallback model i: the main
// config with the fallback's endpoint, key, model, protocol and provider
// options in place of the main model's, and no fallbacks of its own. A
// fallback with an endpoint of its own gets its own key or none, never the
// main one, and none of the main provider options that belong to the main
// endpoint (headers, body fields, the cache's body fields); its protocol
// defaults to chat. One without keeps the main endpoint and key.
func (c *Config) FallbackConfig(i int) *Config {
	out := *c
	out.Fallback = nil
	fm := c.Fallback.Models[i]
	if fm.Profile != "" || fm.BaseURL != "" {
		out.Profile = fm.Profile
	}
	if fm.BaseURL != "" {
		out.BaseURL, out.APIKey = fm.BaseURL, fm.APIKey
		out.Protocol = provider.ProtocolChat
		out.Provider = ProviderOptions{Params: c.Provider.Params, ToolChoice: c.Provider.ToolChoice, VendorOptions: c.Provider.VendorOptions}
		out.Cache.Body = nil
	} else if fm.APIKey != "" {
		out.APIKey = fm.APIKey
	}
	if fm.Model != "" {
		out.Model = fm.Model
	}
	if fm.Protocol != "" {
		out.Protocol = fm.Protocol
	}
	if fm.Provider != nil {
		out.Provider = *fm.Provider
	}
	return &out
}

// fallbackConfig reads config.fallback.
func fallbackConfig(problems *validator, f *agentv1.FallbackConfig) *FallbackConfig {
	out := &FallbackConfig{}
	for i, m := range f.GetModels() {
		field := fmt.Sprintf("config.fallback.models[%d]", i)
		fm := FallbackModel{Profile: m.GetProfile(), BaseURL: m.GetBaseUrl(), APIKey: m.GetApiKey(), Model: m.GetModel()}
		checkBaseURL(problems, field+".base_url", fm.BaseURL)
		checkAPIKey(problems, field+".api_key", fm.APIKey)
		if p, ok := protocolOf(problems, field+".protocol", m.GetProtocol()); ok {
			fm.Protocol = p
		}
		if p := m.GetProvider(); p != nil {
			po := providerOptions(problems, field+".provider", p)
			fm.Provider = &po
		}
		switch {
		case fm.BaseURL != "" && fm.Model == "":
			problems.add(field+".model", "is required with a base_url")
		case fm.Profile == "" && fm.BaseURL == "" && fm.Model == "":
			problems.add(field, "names no model: give a profile, or a model (with a base_url for another endpoint than the main model's)")
		}
		out.Models = append(out.Models, fm)
	}
	for i, k := range f.GetOn() {
		field := fmt.Sprintf("config.fallback.on[%d]", i)
		switch name, known := agentv1.ErrorKind_name[int32(k)]; {
		case !known:
			problems.add(field, "unknown error kind %d", k)
		case k == agentv1.ErrorKind_ERROR_KIND_UNSPECIFIED:
			problems.add(field, "is unspecified: name a kind (ERROR_KIND_SERVER, ERROR_KIND_LIMIT, ERROR_KIND_TIMEOUT, ERROR_KIND_NETWORK, ERROR_KIND_AUTH, ERROR_KIND_REQUEST or ERROR_KIND_UNKNOWN)")
		case k == agentv1.ErrorKind_ERROR_KIND_ABORTED:
			problems.add(field, "a stopped request never falls back")
		default:
			out.On = append(out.On, Kind(strings.ToLower(strings.TrimPrefix(name, "ERROR_KIND_"))))
		}
	}
	if len(out.On) > 0 && len(out.Models) == 0 {
		problems.add("config.fallback.models", "is empty: fallback.on names error kinds but there is no model to fall back on")
	}
	return out
}
