package interceptor

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// servicePrefix is the full method prefix of AgentService: only its methods
// need a credential; health checks stay open for probes, and reflection
// unless it is set to auth.
const servicePrefix = "/agentcore.v1.AgentService/"

// reflectionPrefixes are the methods of gRPC server reflection (v1 and v1alpha).
var reflectionPrefixes = []string{"/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/"}

// authorize returns the context handlers get: with the caller's tenant for
// every AgentService method (and reflection when it needs a credential).
func (g *guard) authorize(ctx context.Context, method string) (context.Context, error) {
	if !strings.HasPrefix(method, servicePrefix) && !(g.opts.ReflectionAuth && isReflection(method)) {
		return ctx, nil
	}
	t, err := g.opts.Auth.Authenticate(ctx)
	if err != nil {
		return ctx, refuse(codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED, "%v", err)
	}
	return auth.NewContext(ctx, t), nil
}

func isReflection(method string) bool {
	for _, p := range reflectionPrefixes {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}
