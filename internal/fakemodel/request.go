package fakemodel

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sync"

	"github.com/bytedance/sonic"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Request is a request the server received.
type Request struct {
	// Protocol is the protocol of the path the request used.
	Protocol provider.Protocol
	// Method is the HTTP method.
	Method string
	// Path is the URL path.
	Path string
	// Query is the URL query.
	Query url.Values
	// Header is the request's headers.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Stream says whether the request asked for a stream.
	Stream bool

	jsonOnce sync.Once
	json     map[string]any
}

// JSON returns Body decoded, nil when it is not a JSON object. It is
// decoded on the first call: most requests are never read whole, and a
// request that offers a model many tools takes this server, which shares
// the benchmarks' cores, about a hundred microseconds to decode.
func (r *Request) JSON() map[string]any {
	r.jsonOnce.Do(func() {
		var m map[string]any
		if json.Unmarshal(r.Body, &m) == nil {
			r.json = m
		}
	})
	return r.json
}

// Field decodes the body's top-level member key into v and reports
// whether it is there with v's type. It finds the member without decoding
// the rest of the body.
func (r *Request) Field(key string, v any) bool {
	node, err := sonic.Get(r.Body, key)
	if err != nil {
		return false
	}
	raw, err := node.Raw()
	return err == nil && json.Unmarshal([]byte(raw), v) == nil
}

// requestModel returns the "model" field of a JSON request.
func requestModel(req *Request) string {
	var m string
	req.Field("model", &m)
	return m
}
