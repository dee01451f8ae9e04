package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress notifications are taken off the wire as they are read, not from
// the SDK's notification handler: the SDK runs notification handlers on
// another goroutine than the one that reads responses, so the last progress
// before a result could arrive after the call returned and be lost. Taken
// where they are read, they are delivered before the response behind them is
// even read.

const progressMethod = "notifications/progress"

// maxProgressEvent bounds how much of one SSE event is kept to look for a
// progress notification; bigger events (results) are passed through unread.
const maxProgressEvent = 64 << 10

// progressTransport hands the progress notifications a connection reads to
// deliver, in order with the rest. It suits transports whose connections the
// client needs nothing else of (stdio, sse); streamable HTTP uses progressBody.
type progressTransport struct {
	sdk.Transport
	deliver func(*sdk.ProgressNotificationParams)
}

func (t *progressTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: conn, deliver: t.deliver}, nil
}

type progressConn struct {
	sdk.Connection
	deliver func(*sdk.ProgressNotificationParams)
}

func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == progressMethod {
		deliverProgress(req.Params, c.deliver)
	}
	return msg, err
}

func deliverProgress(params json.RawMessage, deliver func(*sdk.ProgressNotificationParams)) {
	var p sdk.ProgressNotificationParams
	if json.Unmarshal(params, &p) == nil {
		deliver(&p)
	}
}

// progressBody passes a text/event-stream body through, handing each
// progress notification it carries to deliver once its event is complete.
type progressBody struct {
	io.ReadCloser
	deliver func(*sdk.ProgressNotificationParams)
	line    []byte // the current line, up to maxProgressEvent bytes of it
	lineLen int    // the current line's whole length
	data    []byte // the current event's data
	tooBig  bool   // the current event is too big to be progress
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	return n, err
}

func (b *progressBody) scan(chunk []byte) {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		b.lineLen += len(part)
		if len(b.line)+len(part) <= maxProgressEvent {
			b.line = append(b.line, part...)
		}
		if i < 0 {
			return
		}
		chunk = chunk[i+1:]
		b.endLine()
	}
}

func (b *progressBody) endLine() {
	line := bytes.TrimSuffix(b.line, []byte("\r"))
	whole := b.lineLen == len(b.line)
	b.line, b.lineLen = b.line[:0], 0
	if len(line) == 0 && whole { // a blank line ends the event
		if !b.tooBig && bytes.Contains(b.data, []byte(progressMethod)) {
			if msg, err := jsonrpc.DecodeMessage(b.data); err == nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.Method == progressMethod {
					deliverProgress(req.Params, b.deliver)
				}
			}
		}
		b.data, b.tooBig = b.data[:0], false
		return
	}
	value, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || b.tooBig {
		return
	}
	value = bytes.TrimPrefix(value, []byte(" "))
	if !whole || len(b.data)+1+len(value) > maxProgressEvent {
		b.data, b.tooBig = b.data[:0], true
		return
	}
	if len(b.data) > 0 {
		b.data = append(b.data, '\n')
	}
	b.data = append(b.data, value...)
}
