package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func hideS3cret(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") }

func TestRedactOutput(t *testing.T) {
	png := &agentv1.Part{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: "image/png", Source: &agentv1.FilePart_Data{Data: []byte("s3cret")}}}}
	content := func(parts ...*agentv1.Part) *agentv1.ToolOutput {
		return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: parts}}}
	}
	text := func(s string) *agentv1.Part { return &agentv1.Part{Kind: &agentv1.Part_Text{Text: s}} }
	file := func(mt, data string) *agentv1.Part {
		return &agentv1.Part{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: mt, Filename: "f", Source: &agentv1.FilePart_Data{Data: []byte(data)}}}}
	}
	tests := []struct {
		name     string
		in, want *agentv1.ToolOutput
	}{
		{"text", TextOutput("key=s3cret"), TextOutput("key=[redacted]")},
		{"json", JSONOutput(json.RawMessage(`{"key":"s3cret"}`)), JSONOutput(json.RawMessage(`{"key":"[redacted]"}`))},
		{"content", content(text("a s3cret"), file("text/plain; charset=utf-8", "s3cret"), png, text("clean")),
			content(text("a [redacted]"), file("text/plain; charset=utf-8", "[redacted]"), png, text("clean"))},
		{"clean", TextOutput("nothing here"), nil},
		{"nil", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := proto.Clone(tc.in)
			got := RedactOutput(tc.in, hideS3cret)
			if tc.want == nil {
				if got != tc.in {
					t.Errorf("a clean output was copied")
				}
				return
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if !proto.Equal(tc.in, before) {
				t.Errorf("the output given was changed: %v", tc.in)
			}
		})
	}
}

// TestExecuteRedacts: Options.Redact cleans the live output and the result,
// before the result is cut to its limit.
func TestExecuteRedacts(t *testing.T) {
	set, err := InProcess(Spec{Name: "leak", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ json.RawMessage, emit func(string)) (Result, error) {
			emit("live s3cret")
			// The cut (limit 60: the first 30 characters kept) would fall inside the secret.
			return Result{Output: TextOutput(strings.Repeat("x", 28) + "s3cret" + strings.Repeat("y", 52))}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var chunks []string
	res := set.Execute(context.Background(), "leak", nil, Options{
		Redact: hideS3cret, Limit: 60, OnOutput: func(ch Chunk) { chunks = append(chunks, ch.Data) },
	})
	if strings.Join(chunks, "") != "live [redacted]" {
		t.Errorf("chunks %q", chunks)
	}
	if out := OutputText(res.Output); !strings.HasPrefix(out, strings.Repeat("x", 28)+"[r") || strings.Contains(out, "s3") {
		t.Errorf("result %q: want the secret redacted before the cut", out)
	}
}
