package chat

import (
	"encoding/json"
	"testing"
)

// TestWireContentShapes: the shapes content comes in, the fast path for a
// string without escapes and the decoder's for the rest reading alike.
func TestWireContentShapes(t *testing.T) {
	tests := []struct {
		name, in, text, reasoning string
	}{
		{"plain string", `"hello world"`, "hello world", ""},
		{"empty string", `""`, "", ""},
		{"escapes", `"line\none \"q\" \u00e9\ud83d\ude00 \/"`, "line\none \"q\" é😀 /", ""},
		{"raw UTF-8", `"héllo 😀"`, "héllo 😀", ""},
		{"null", `null`, "", ""},
		{"parts", `[{"type":"text","text":"a"},{"type":"thinking","thinking":"t"},{"type":"image_url"}]`, "a", "t"},
		{"other", `{"x":1}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c struct {
				C wireContent `json:"c"`
			}
			if err := json.Unmarshal([]byte(`{"c":`+tt.in+`}`), &c); err != nil {
				t.Fatal(err)
			}
			if c.C.text != tt.text || c.C.reasoning != tt.reasoning {
				t.Errorf("got %q / %q, want %q / %q", c.C.text, c.C.reasoning, tt.text, tt.reasoning)
			}
		})
	}
}
