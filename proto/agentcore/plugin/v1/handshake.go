package pluginv1

// The go-plugin handshake shared by the host (pkg/tool) and plugins
// (sdk/tool). Plugins in other languages use the same values.
const (
	// ProtocolVersion is the application protocol version of ToolPluginService.
	ProtocolVersion = 1
	// MagicCookieKey is the environment variable the host sets when it starts a plugin.
	MagicCookieKey = "AGENTCORE_TOOL_PLUGIN"
	// MagicCookieValue is the value of MagicCookieKey.
	MagicCookieValue = "tool-plugin-v1"
	// PluginName is the name under which the service is dispensed in go-plugin's plugin set.
	PluginName = "tool"
	// MaxResultBytesEnv is the environment variable in which the host tells
	// a plugin the most bytes a result should take: a larger one is cut by
	// the host (or refused, past what its transport takes), so a plugin
	// should cut its own first, as sdk/tool does.
	MaxResultBytesEnv = "AGENTCORE_MAX_RESULT_BYTES"
)
