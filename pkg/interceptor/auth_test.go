package interceptor

import (
	"testing"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestServicePrefixMatchesTheService(t *testing.T) {
	if want := "/" + agentv1.AgentService_ServiceDesc.ServiceName + "/"; servicePrefix != want {
		t.Fatalf("servicePrefix %q, want %q: the bearer token would not guard AgentService", servicePrefix, want)
	}
}
