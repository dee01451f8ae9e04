package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"strings"
	"testing"
)

func TestTruncateThroughExecute(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	res := set.Execute(context.Background(), "big", json.RawMessage(`{"n":100000}`), Options{Limit: 1000})
	text := OutputText(res.Output)
	if res.Error || !strings.HasPrefix(text, strings.Repeat("a", 500)+"\n\n[… 99000 of 100000 characters cut") ||
		!strings.HasSuffix(text, "pages.]\n\n"+strings.Repeat("z", 500)) {
		t.Fatalf("truncated = %.300q … %.100q", text, text[max(len(text)-100, 0):])
	}
	img := set.Execute(context.Background(), "image", nil, Options{Limit: 10})
	parts := img.Output.GetContent().GetParts()
	if len(parts) != 3 || !strings.Contains(parts[0].GetText(), "cut from the middle") {
		t.Fatalf("image text part = %v", parts[0])
	}
	if _, err := png.Decode(bytes.NewReader(parts[1].GetFile().GetData())); err != nil {
		t.Fatalf("the image was touched: %v", err)
	}
}

func TestOversizedResults(t *testing.T) {
	h := newHost(t, Config{MaxReceiveBytes: 1 << 20, MaxResultBytes: 256 << 10})
	set := scan(t, h, dirs.good, dirs.plain)
	// sdk/tool cuts a result to the size the host asked for before sending it.
	res := set.Execute(context.Background(), "big", json.RawMessage(`{"n":20000000}`), Options{})
	text := OutputText(res.Output)
	if res.Error || len(text) > 256<<10 || !strings.Contains(text, "cut from the middle by the tool") ||
		!strings.HasPrefix(text, "aaaa") || !strings.HasSuffix(text, "zzzz") {
		t.Fatalf("a 20 MB result: error=%v, %d bytes: %.200q", res.Error, len(text), text)
	}
	// The host's own cap on what a result adds to a history.
	res = set.Execute(context.Background(), "big", json.RawMessage(`{"n":20000000}`), Options{MaxBytes: 16 << 10})
	if text := OutputText(res.Output); len(text) > 16<<10 || !strings.Contains(text, "bytes cut from the middle") {
		t.Fatalf("capped to 16 KiB: %d bytes", len(text))
	}
	img := set.Execute(context.Background(), "image", nil, Options{MaxBytes: 600})
	parts := img.Output.GetContent().GetParts()
	if len(parts) != 3 || parts[1].GetFile() != nil || !strings.Contains(parts[1].GetText(), "image/png file of") {
		t.Fatalf("image capped to 600 bytes: %v", img.Output)
	}
	// A plugin without sdk/tool that sends more than the host takes.
	huge := `{"s":"` + strings.Repeat("x", 2<<20) + `"}`
	res = set.Execute(context.Background(), "plain_echo", json.RawMessage(huge), Options{})
	if !res.Error || !strings.Contains(OutputText(res.Output), "sent a message larger than the host accepts (1048576 bytes)") {
		t.Fatalf("a 2 MB message over a 1 MB transport limit: %.300s", OutputText(res.Output))
	}
	if res := set.Execute(context.Background(), "plain_echo", json.RawMessage(`{"k":1}`), Options{}); res.Error {
		t.Fatalf("the next call: %v", res.Output)
	}
}
