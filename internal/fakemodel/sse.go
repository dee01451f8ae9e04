package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// writeEvent writes one event in SSE framing.
func writeEvent(b *bytes.Buffer, e Event) {
	if e.Name != "" {
		b.WriteString("event: ")
		b.WriteString(e.Name)
		b.WriteByte('\n')
	}
	for line := range strings.SplitSeq(e.Data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}

// SSE returns events in SSE framing, for Turn.Raw.
func SSE(events ...Event) []byte {
	var b bytes.Buffer
	for _, e := range events {
		writeEvent(&b, e)
	}
	return b.Bytes()
}

// ChunkEvents turns a recorded *.chunks.txt (one JSON payload per line) into
// events. With named set each event is named after its payload's "type"
// field, as the Responses and Anthropic streams are.
func ChunkEvents(chunks []byte, named bool) ([]Event, error) {
	var out []Event
	for i, line := range strings.Split(string(chunks), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		e := Event{Data: line}
		if named {
			var p struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				return nil, fmt.Errorf("fakemodel: chunk line %d: %w", i+1, err)
			}
			if p.Type == "" {
				return nil, fmt.Errorf("fakemodel: chunk line %d has no type", i+1)
			}
			e.Name = p.Type
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("fakemodel: no chunks")
	}
	return out, nil
}
