package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// Post sends body as a JSON POST to url with header and returns the response
// when its status is 2xx; the caller closes its body. A failure to send is
// classified by FromTransport, any other status by FromStatus; either way the
// error is a *Error. When ctx holds a span (the server traces), its W3C
// traceparent and tracestate go along.
func Post(ctx context.Context, client *http.Client, url string, header http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Kind: KindRequest, Message: "cannot build the request: " + err.Error(), Err: err}
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	injectTrace(ctx, req.Header)
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, atEndpoint(FromTransport(ctx, err), req)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil && ctx.Err() != nil {
		return nil, atEndpoint(FromTransport(ctx, err), req)
	}
	return nil, atEndpoint(FromStatus(resp.StatusCode, resp.Header, data), req)
}

// atEndpoint names the request's host and path in its error.
func atEndpoint(e *Error, req *http.Request) *Error {
	if e.Endpoint == "" {
		e.Endpoint = Endpoint(req.URL)
	}
	return e
}

// Endpoint is a URL's host and path, as errors and logs name the endpoint
// called: never its query (Gemini's key may sit there), fragment or
// credentials.
func Endpoint(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Host + u.EscapedPath()
}

// ReadBody reads a whole 2xx response body, classifying a failure to read it.
func ReadBody(ctx context.Context, resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, FromTransport(ctx, err)
	}
	return data, nil
}

// MarshalBody encodes a request body as compact JSON without HTML escaping.
// Top-level Encoded and ToolList values of a map body are copied in as they are.
func MarshalBody(body any) ([]byte, error) {
	var data []byte
	var err error
	if m, ok := body.(map[string]any); ok {
		data, err = marshalMap(m)
	} else {
		data, err = encode(body)
	}
	if err != nil {
		return nil, &Error{Kind: KindRequest, Message: "cannot encode the request body: " + err.Error(), Err: err}
	}
	return data, nil
}

// encode encodes v as compact JSON without HTML escaping.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// RequestError reports input an adapter cannot send (an unsupported part, a
// bad schema): a non-retryable KindRequest error.
func RequestError(format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: KindRequest, Message: err.Error(), Err: err}
}

// ParseDataURL splits a base64 data URL (data:image/png;base64,AAAA) into its
// media type and base64 payload. ok is false for anything else.
func ParseDataURL(s string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(s, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	meta, isBase64 := strings.CutSuffix(meta, ";base64")
	if !isBase64 {
		return "", "", false
	}
	if i := strings.IndexByte(meta, ';'); i >= 0 {
		meta = meta[:i]
	}
	return meta, data, true
}

// StringMap reads a provider data map from an Extra value: map[string]string
// as adapters write it, or map[string]any after a trip through JSON.
func StringMap(v any) map[string]string {
	switch m := v.(type) {
	case map[string]string:
		return m
	case map[string]any:
		out := make(map[string]string, len(m))
		for k, x := range m {
			if s, ok := x.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	return nil
}

// ToolParameters returns a tool's parameters as a JSON Schema object, or nil
// when the tool takes none: those PrepareTool kept, else derived from
// t.ParamsOneOf.
func ToolParameters(t *schema.ToolInfo) (json.RawMessage, error) {
	if w := wireOf(t); w != nil {
		return w.params, nil
	}
	return toolParameters(t)
}

func toolParameters(t *schema.ToolInfo) (json.RawMessage, error) {
	if t.ParamsOneOf == nil {
		return nil, nil
	}
	s, err := t.ToJSONSchema()
	if err != nil {
		return nil, RequestError("tool %q: bad parameters: %w", t.Name, err)
	}
	if s == nil {
		return nil, nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, RequestError("tool %q: bad parameters: %w", t.Name, err)
	}
	return raw, nil
}

// Call is what one Generate or Stream call sends: the Config's settings with
// the call's eino options applied over them.
type Call struct {
	Params Params
	Tools  []*schema.ToolInfo
	// ToolChoice is "", "auto", "none", "required" or a tool name; "" when
	// Config.OmitToolChoice is set or nothing was asked for.
	ToolChoice string
}

// ApplyOptions resolves a call from the Config, the tools bound with
// WithTools and the eino common options (model.WithTemperature, WithMaxTokens,
// WithTopP, WithStop, WithTools, WithToolChoice), which win over the Config.
func ApplyOptions(cfg Config, tools []*schema.ToolInfo, opts ...model.Option) Call {
	common := model.GetCommonOptions(&model.Options{Tools: tools}, opts...)
	call := Call{Params: cfg.Params, Tools: common.Tools, ToolChoice: cfg.ToolChoice}
	if common.Temperature != nil {
		v := float64(*common.Temperature)
		call.Params.Temperature = &v
	}
	if common.TopP != nil {
		v := float64(*common.TopP)
		call.Params.TopP = &v
	}
	if common.MaxTokens != nil {
		v := *common.MaxTokens
		call.Params.MaxOutputTokens = &v
	}
	if common.Stop != nil {
		call.Params.Stop = common.Stop
	}
	if common.ToolChoice != nil {
		switch *common.ToolChoice {
		case schema.ToolChoiceForbidden:
			call.ToolChoice = "none"
		case schema.ToolChoiceAllowed:
			call.ToolChoice = "auto"
		case schema.ToolChoiceForced:
			call.ToolChoice = "required"
			if len(common.AllowedToolNames) == 1 {
				call.ToolChoice = common.AllowedToolNames[0]
			}
		}
	}
	if cfg.OmitToolChoice {
		call.ToolChoice = ""
	}
	return call
}

// ObjectArgs returns a tool call's arguments as a JSON object for protocols
// that take the arguments as an object: "" becomes {}, and text that is not a
// JSON object becomes {"raw_arguments": text} (the string's content for a
// JSON string, as a custom call's free text is kept), so that a history
// holding a broken or freeform call can still be sent.
func ObjectArgs(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(trimmed), &obj) == nil && obj != nil {
		return json.RawMessage(trimmed)
	}
	var text string // a custom (freeform) call's free text
	if strings.HasPrefix(trimmed, `"`) && json.Unmarshal([]byte(trimmed), &text) == nil {
		args = text
	}
	raw, _ := json.Marshal(map[string]string{"raw_arguments": args})
	return raw
}

// FreeformArgs returns a custom tool call's free text as its arguments: one
// JSON string.
func FreeformArgs(text string) string {
	b, _ := MarshalBody(text)
	return string(b)
}

// FreeformText returns the free text of a custom tool call's arguments: the
// JSON string's content, or the arguments as they are when they are not one.
func FreeformText(args string) string {
	var s string
	if json.Unmarshal([]byte(args), &s) != nil {
		return args
	}
	return s
}

// IsFreeform reports whether a call's provider data marks it as a call to a
// custom (freeform) tool.
func IsFreeform(data map[string]string) bool {
	return data[FreeformKey] == FreeformCall
}

// ReadWhole reads a whole response body and turns it into the message with
// decode, which returns the chunks the same response would have streamed
// (final chunk last). The message is the chunks joined with
// schema.ConcatMessages, with the final chunk's usage kept whole.
func ReadWhole(ctx context.Context, resp *http.Response, decode func([]byte) ([]*schema.Message, error)) (*schema.Message, error) {
	chunks, err := readChunks(ctx, resp, decode)
	if err != nil {
		return nil, err
	}
	msg, err := schema.ConcatMessages(chunks)
	if err != nil {
		return nil, Unknown("cannot assemble the response", err)
	}
	if last := chunks[len(chunks)-1].ResponseMeta; last != nil && msg.ResponseMeta != nil {
		msg.ResponseMeta.Usage = last.Usage // ConcatMessages keeps only part of it
	}
	return msg, nil
}

func readChunks(ctx context.Context, resp *http.Response, decode func([]byte) ([]*schema.Message, error)) ([]*schema.Message, error) {
	body, err := ReadBody(ctx, resp)
	if err != nil {
		return nil, err
	}
	chunks, err := decode(body)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 {
		return nil, Unknown("the response holds no message", nil)
	}
	return chunks, nil
}

// ReadStream returns the chunks of a streaming response. An event stream is
// read in a goroutine by read, which gets the SSE reader and an emit function
// that reports false once the consumer has closed the stream; read's error
// becomes the stream's last Recv error, and the body is closed when read
// returns. A JSON body (some gateways answer a stream request with one) is
// decoded whole with decode instead. The caller must Close or drain the
// returned reader. A complete stream's body is read to its end before it is
// closed, so that its connection is kept (see readEvents).
func ReadStream(ctx context.Context, resp *http.Response, decode func([]byte) ([]*schema.Message, error),
	read func(r *sse.Reader, emit func(*schema.Message) bool) error) (*schema.StreamReader[*schema.Message], error) {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		chunks, err := readChunks(ctx, resp, decode)
		if err != nil {
			return nil, err
		}
		return schema.StreamReaderFromArray(chunks), nil
	}
	sr, sw := schema.Pipe[*schema.Message](16)
	go func() {
		defer sw.Close()
		err := readEvents(ctx, resp, read, func(c *schema.Message) bool { return !sw.Send(c, nil) })
		if err != nil {
			sw.Send(nil, err)
		}
	}()
	return sr, nil
}

// readEvents runs read over the event stream of resp and closes the body.
// After a complete stream (read returned nil and emit never refused a
// chunk) the body is read to its end first (sse.Reader.Finish), so that its
// connection is kept for the next request.
func readEvents(ctx context.Context, resp *http.Response, read func(r *sse.Reader, emit func(*schema.Message) bool) error,
	emit func(*schema.Message) bool) error {
	r := sse.NewReader(ctx, resp.Body)
	stopped := false
	err := read(r, func(c *schema.Message) bool {
		if !emit(c) {
			stopped = true
			return false
		}
		return true
	})
	if err == nil && !stopped {
		_ = r.Finish()
	} else {
		_ = r.Close()
	}
	return err
}

// Streamer is a model that can stream to a callback: StreamEach is Stream
// without the goroutine and the pipe between the response and its reader.
// Each chunk goes to emit on the calling goroutine, in order, and reading
// stops when emit reports false; the error is the one Stream's reader would
// have returned last. This package's adapters implement it; pkg/llm uses it
// when the model does.
type Streamer interface {
	StreamEach(ctx context.Context, input []*schema.Message, emit func(*schema.Message) bool, opts ...model.Option) error
}

// ReadEach is ReadStream for a Streamer: read (or decode, for a JSON body)
// runs on the calling goroutine and its chunks go to emit; the body is closed
// when it returns.
func ReadEach(ctx context.Context, resp *http.Response, decode func([]byte) ([]*schema.Message, error),
	read func(r *sse.Reader, emit func(*schema.Message) bool) error, emit func(*schema.Message) bool) error {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		chunks, err := readChunks(ctx, resp, decode)
		if err != nil {
			return err
		}
		for _, c := range chunks {
			if !emit(c) {
				break
			}
		}
		return nil
	}
	return readEvents(ctx, resp, read, emit)
}

// PostJSON encodes body and posts it to url with header, Config.Headers added
// over it, through Config.HTTPClient; see Post.
func PostJSON(ctx context.Context, cfg Config, url string, header http.Header, body any) (*http.Response, error) {
	data, err := MarshalBody(body)
	if err != nil {
		return nil, err
	}
	if header == nil {
		header = http.Header{}
	}
	for k, v := range cfg.Headers {
		header.Set(k, v)
	}
	return Post(ctx, cfg.HTTPClient, url, header, data)
}

// WithDefaults checks that the Config names a model and returns it with
// BaseURL defaulted to base and stripped of a trailing slash.
func (c Config) WithDefaults(base string) (Config, error) {
	if c.Model == "" {
		return c, errors.New("model is required")
	}
	if c.BaseURL == "" {
		c.BaseURL = base
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c, nil
}

// Media kinds, as a content part's data is sent.
const (
	MediaImage = "image"
	MediaAudio = "audio"
	MediaVideo = "video"
	MediaFile  = "file"
)

// Media is a non-text content part's data, resolved for sending.
type Media struct {
	// Kind is MediaImage, MediaAudio, MediaVideo or MediaFile. A file part
	// whose MIME type is image/*, audio/* or video/* takes that kind.
	Kind string
	// MIMEType is the part's type, or the one its data URL names; may be
	// empty for a URL.
	MIMEType string
	// Data is the base64 payload, from Base64Data or a data URL.
	Data string
	// URL is set when the part is a URL other than a data URL.
	URL string
	// Name is the file name, when given.
	Name string
}

// MediaOf resolves an image, audio, video or file part. A part without its
// payload, or without data and URL, is a request error.
func MediaOf(part schema.MessageInputPart) (Media, error) {
	var common *schema.MessagePartCommon
	media := Media{}
	switch part.Type {
	case schema.ChatMessagePartTypeImageURL:
		media.Kind = MediaImage
		if part.Image != nil {
			common = &part.Image.MessagePartCommon
		}
	case schema.ChatMessagePartTypeAudioURL:
		media.Kind = MediaAudio
		if part.Audio != nil {
			common = &part.Audio.MessagePartCommon
		}
	case schema.ChatMessagePartTypeVideoURL:
		media.Kind = MediaVideo
		if part.Video != nil {
			common = &part.Video.MessagePartCommon
		}
	case schema.ChatMessagePartTypeFileURL:
		media.Kind = MediaFile
		if part.File != nil {
			common = &part.File.MessagePartCommon
			media.Name = part.File.Name
		}
	default:
		return media, RequestError("unknown content part type %q", part.Type)
	}
	if common == nil {
		return media, RequestError("%s part without its %s", part.Type, media.Kind)
	}
	media.MIMEType = strings.ToLower(common.MIMEType)
	switch {
	case common.Base64Data != nil:
		media.Data = *common.Base64Data
	case common.URL != nil:
		if mt, data, ok := ParseDataURL(*common.URL); ok {
			media.Data = data
			if media.MIMEType == "" {
				media.MIMEType = strings.ToLower(mt)
			}
		} else {
			media.URL = *common.URL
		}
	default:
		return media, RequestError("%s part without data or URL", media.Kind)
	}
	if media.Kind == MediaFile {
		for _, k := range []string{MediaImage, MediaAudio, MediaVideo} {
			if strings.HasPrefix(media.MIMEType, k+"/") {
				media.Kind = k
			}
		}
	}
	return media, nil
}

// SnakeKey turns an AI SDK style option name (budgetTokens) into the wire's
// snake_case (budget_tokens). Names already in snake_case are unchanged.
func SnakeKey(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SnakeKeys copies a JSON object with every object key, at every depth,
// passed through SnakeKey. Values are kept.
func SnakeKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[SnakeKey(k)] = snakeValue(v)
	}
	return out
}

func snakeValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return SnakeKeys(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeValue(e)
		}
		return out
	}
	return v
}
