// Command plainplug is a plugin written without sdk/tool, as a plugin in
// another language would be: the go-plugin handshake and the gRPC service's
// required methods, Describe and Execute, but not the optional Session.
package main

import (
	"context"
	"os"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

type server struct {
	pluginv1.UnimplementedToolPluginServiceServer
}

func (server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	return &pluginv1.DescribeResponse{Tools: []*pluginv1.ToolSpec{{
		Name:            "plain_echo",
		Description:     "Echoes its input as JSON after two chunks.",
		InputSchemaJson: `{"type":"object"}`,
	}}}, nil
}

func (server) Execute(req *pluginv1.ExecuteRequest, s grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
	euro := []byte("€")
	for _, data := range [][]byte{append([]byte("pid "+itoa(os.Getpid())+" "), euro[:1]...), append(euro[1:], 0xff)} {
		if err := s.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Output{Output: &pluginv1.OutputChunk{
			Stream: pluginv1.OutputStream_OUTPUT_STREAM_STDOUT, Data: data,
		}}}); err != nil {
			return err
		}
	}
	return s.Send(&pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Result{Result: &pluginv1.ToolResult{
		Output: &pluginv1.ToolResult_Json{Json: req.GetInputJson()},
	}}})
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

func (grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterToolPluginServiceServer(s, server{})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  pluginv1.ProtocolVersion,
			MagicCookieKey:   pluginv1.MagicCookieKey,
			MagicCookieValue: pluginv1.MagicCookieValue,
		},
		Plugins:    plugin.PluginSet{pluginv1.PluginName: grpcPlugin{}},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}
