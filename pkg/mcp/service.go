package mcp

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// Service serves a Bridge as the plugin protocol's ToolPluginService, so a
// plugin process (toolhost) can offer an MCP server's tools to the host.
type Service struct {
	pluginv1.UnimplementedToolPluginServiceServer
	bridge *Bridge
}

// NewService returns the plugin service of bridge.
func NewService(bridge *Bridge) *Service {
	return &Service{bridge: bridge}
}

// Describe discovers the server's tools. A server that cannot be reached is
// Unavailable, with the definition's path and the cause in the message.
func (s *Service) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	specs, err := s.bridge.Discover(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		if notConnected(err) {
			// The host leaves the server's tools out until it is connected.
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &pluginv1.DescribeResponse{Tools: specs}, nil
}

// Execute runs one call: its progress and stderr as output chunks, then its
// result. It ends with the context's status when the call is cancelled.
func (s *Service) Execute(req *pluginv1.ExecuteRequest, stream grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
	ctx := stream.Context()
	res, err := s.bridge.Call(ctx, req.GetTool(), req.GetInputJson(), func(c *pluginv1.OutputChunk) {
		// A failed send means the host has gone; ctx ends the call.
		_ = stream.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Output{Output: c}})
	})
	if err != nil {
		if ctx.Err() == nil {
			return status.Error(codes.Internal, err.Error())
		}
		return status.FromContextError(ctx.Err()).Err()
	}
	return stream.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Result{Result: res}})
}
