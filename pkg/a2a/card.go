package a2a

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// protocolVersion is the A2A protocol version a2a-go v0.3 speaks.
const protocolVersion = "0.3.0"

// Security scheme names on the cards.
const (
	schemeBearer = "bearer"
	schemeMTLS   = "mtls"
)

// serveCard answers an agent's card: 404 for an agent the caller's tenant
// does not have.
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("agent")
	card, err := h.card(callContext(r), id, endpoint(r, id))
	if err != nil {
		code := http.StatusInternalServerError
		switch status.Code(err) {
		case codes.NotFound, codes.InvalidArgument:
			code = http.StatusNotFound
		case codes.Unauthenticated:
			code = http.StatusUnauthorized
		case codes.PermissionDenied:
			code = http.StatusForbidden
		case codes.Unavailable:
			code = http.StatusServiceUnavailable
		}
		http.Error(w, status.Convert(err).Message(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(card)
}

// card is the agent card of agent id, served at url: a skill per tool it
// may use (its agent tools included), the server's security schemes.
func (h *Handler) card(ctx context.Context, id, url string) (*a2a.AgentCard, error) {
	if !validAgentID(id) {
		return nil, status.Errorf(codes.NotFound, "agent %q not found", id)
	}
	got, err := h.client.GetAgent(ctx, &agentv1.GetAgentRequest{AgentId: id})
	if err != nil {
		return nil, err
	}
	ag := got.GetAgent()
	tools, err := h.client.ListTools(ctx, &agentv1.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	card := &a2a.AgentCard{
		Name:               id,
		Description:        "agentcore agent " + id + ": send it a task; it works on it with its model and tools and answers with the result.",
		URL:                url,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    protocolVersion,
		Version:            h.opts.Version,
		Provider:           &a2a.AgentProvider{Org: "agentcore", URL: "https://github.com/agentcore/agentcore"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: h.opts.Push != nil},
		DefaultInputModes:  []string{"text/plain", "application/json", "image/*", "audio/*", "video/*", "application/octet-stream"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills:             skills(ag, tools.GetTools()),
	}
	if h.opts.BearerAuth || h.opts.MutualTLS {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{}
	}
	if h.opts.BearerAuth {
		card.SecuritySchemes[schemeBearer] = a2a.HTTPAuthSecurityScheme{Scheme: "bearer", Description: "an agent-server token (-auth-tokens-file)"}
		card.Security = append(card.Security, a2a.SecurityRequirements{schemeBearer: {}})
	}
	if h.opts.MutualTLS {
		card.SecuritySchemes[schemeMTLS] = a2a.MutualTLSSecurityScheme{Description: "a client certificate the server's -tls-client-ca signed"}
		card.Security = append(card.Security, a2a.SecurityRequirements{schemeMTLS: {}})
	}
	return card, nil
}

// skills lists what the agent can do: a skill per server tool its
// selection holds, and one per agent it may call.
func skills(ag *agentv1.Agent, tools []*agentv1.ToolInfo) []a2a.AgentSkill {
	sel := ag.GetTools()
	chosen := map[string]bool{}
	for _, n := range sel.GetNames() {
		chosen[n] = true
	}
	out := []a2a.AgentSkill{}
	for _, t := range tools {
		if sel != nil && !sel.GetAll() && !chosen[t.GetName()] {
			continue
		}
		out = append(out, a2a.AgentSkill{ID: t.GetName(), Name: t.GetName(), Description: t.GetDescription(), Tags: []string{"tool"}})
	}
	for _, at := range ag.GetAgentTools() {
		name := at.GetName()
		if name == "" {
			name = at.GetAgentId()
		}
		desc := at.GetDescription()
		if desc == "" {
			desc = "Hand a task to the agent " + at.GetAgentId() + "; it answers with the result."
		}
		out = append(out, a2a.AgentSkill{ID: name, Name: name, Description: desc, Tags: []string{"agent"}})
	}
	return out
}
