package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentcore/agentcore/pkg/tool/live"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// fromPlugin converts a plugin's result into the public types. A result a
// plugin should not have sent (bad JSON, a file part without media type)
// becomes an error result.
func fromPlugin(name string, r *pluginv1.ToolResult) Result {
	out, err := outputFromPlugin(r)
	if err != nil {
		return errorResult(fmt.Sprintf("tool %q returned an invalid result: %v", name, err))
	}
	res := Result{Output: out, Stop: r.GetStop(), Error: r.GetError() != ""}
	if res.Output == nil {
		if res.Error {
			res.Output = TextOutput(r.GetError())
		} else {
			res.Output = TextOutput("")
		}
	}
	return res
}

func outputFromPlugin(r *pluginv1.ToolResult) (*agentv1.ToolOutput, error) {
	switch v := r.GetOutput().(type) {
	case nil:
		return nil, nil
	case *pluginv1.ToolResult_Text:
		return TextOutput(v.Text), nil
	case *pluginv1.ToolResult_Json:
		if !json.Valid([]byte(v.Json)) {
			return nil, errors.New("its JSON output is not valid JSON")
		}
		return JSONOutput(json.RawMessage(v.Json)), nil
	case *pluginv1.ToolResult_Content:
		parts := v.Content.GetParts()
		if len(parts) == 0 {
			return nil, errors.New("its content has no parts")
		}
		out := make([]*agentv1.Part, 0, len(parts))
		for i, p := range parts {
			switch pv := p.GetPart().(type) {
			case *pluginv1.ContentPart_Text:
				out = append(out, &agentv1.Part{Kind: &agentv1.Part_Text{Text: pv.Text}})
			case *pluginv1.ContentPart_File:
				f, err := fileFromPlugin(pv.File)
				if err != nil {
					return nil, fmt.Errorf("content part %d: %w", i, err)
				}
				out = append(out, &agentv1.Part{Kind: &agentv1.Part_File{File: f}})
			default:
				return nil, fmt.Errorf("content part %d is empty", i)
			}
		}
		return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: out}}}, nil
	}
	return nil, errors.New("unknown output kind")
}

func fileFromPlugin(f *pluginv1.FilePart) (*agentv1.FilePart, error) {
	if f.GetMediaType() == "" {
		return nil, errors.New("file part has no media type")
	}
	out := &agentv1.FilePart{MediaType: f.GetMediaType(), Filename: f.GetFilename()}
	switch s := f.GetSource().(type) {
	case *pluginv1.FilePart_Data:
		if len(s.Data) == 0 {
			return nil, errors.New("file part has empty data")
		}
		out.Source = &agentv1.FilePart_Data{Data: s.Data}
	case *pluginv1.FilePart_Url:
		if !strings.HasPrefix(s.Url, "https://") && !strings.HasPrefix(s.Url, "http://") && !strings.HasPrefix(s.Url, "data:") {
			return nil, fmt.Errorf("file part URL %q is not an http(s) or data URL", s.Url)
		}
		out.Source = &agentv1.FilePart_Url{Url: s.Url}
	default:
		return nil, errors.New("file part has neither data nor a URL")
	}
	return out, nil
}

// chunkDecoder turns a call's raw output bytes into valid UTF-8 chunks.
// A chunk may end inside a UTF-8 sequence: the incomplete tail is held back
// and joined with the next chunk of the same stream.
type chunkDecoder struct {
	onOutput func(Chunk)
	// onStderr, if set, gets the data of every stderr chunk as it came.
	onStderr func([]byte)
	pending  map[agentv1.OutputStream][]byte
}

func (d *chunkDecoder) write(stream pluginv1.OutputStream, data []byte) {
	if d.onStderr != nil && stream == pluginv1.OutputStream_OUTPUT_STREAM_STDERR {
		d.onStderr(data)
	}
	if d.onOutput == nil || len(data) == 0 {
		return
	}
	s := agentv1.OutputStream(stream) // the two enums share their numbers
	if p := d.pending[s]; len(p) > 0 {
		data = append(p, data...)
		delete(d.pending, s)
	}
	cut := incompleteTail(data)
	if cut < len(data) {
		if d.pending == nil {
			d.pending = map[agentv1.OutputStream][]byte{}
		}
		d.pending[s] = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	d.emit(s, data)
}

// emit passes data on in chunks of at most live.MaxChunkBytes, cut between
// UTF-8 sequences.
func (d *chunkDecoder) emit(s agentv1.OutputStream, data []byte) {
	for len(data) > 0 {
		cut := len(data)
		if cut > live.MaxChunkBytes {
			cut = live.MaxChunkBytes
			for i := cut; i > cut-utf8.UTFMax; i-- {
				if utf8.RuneStart(data[i]) {
					cut = i
					break
				}
			}
		}
		d.onOutput(Chunk{Stream: s, Data: strings.ToValidUTF8(string(data[:cut]), "\uFFFD")})
		data = data[cut:]
	}
}

// flush sends what is held back, in stream order.
func (d *chunkDecoder) flush() {
	for _, s := range []agentv1.OutputStream{agentv1.OutputStream_OUTPUT_STREAM_OUTPUT, agentv1.OutputStream_OUTPUT_STREAM_STDOUT, agentv1.OutputStream_OUTPUT_STREAM_STDERR} {
		if p := d.pending[s]; len(p) > 0 {
			d.emit(s, p)
		}
	}
	d.pending = nil
}

// incompleteTail returns the index where an unfinished UTF-8 sequence at
// the end of b starts, or len(b).
func incompleteTail(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
