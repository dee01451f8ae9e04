package gateway

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestFastEventJSON holds appendEventJSON equal to the gateway's protojson
// marshaler: the same JSON value for every event it writes, and no answer
// (so protojson writes or refuses it) where protojson would differ.
func TestFastEventJSON(t *testing.T) {
	texts := []string{"", "plain", "line\nbreak\ttab\r\b\f", `quote " and \ backslash`, "\x00\x01\x1f\x7f", "中文 é 😀 \u2028\u2029",
		"<b>&amp;</b>", "\uFFFD", strings.Repeat("long ", 500)}
	times := []*timestamppb.Timestamp{nil, {}, {Seconds: 1796111645, Nanos: 889908447}, {Seconds: 1796111645, Nanos: 889908000},
		{Seconds: 1796111645, Nanos: 889000000}, {Seconds: 1796111645, Nanos: 1}, {Seconds: -62135596800}, {Seconds: 253402300799, Nanos: 999999999}}
	var events []*agentv1.Event
	for i, tx := range texts {
		ts := times[i%len(times)]
		seq := int64(i * 1e9)
		events = append(events,
			&agentv1.Event{Seq: seq, Time: ts, RunId: tx, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: int32(i), Delta: &agentv1.ModelDeltaEvent_Text{Text: tx}}}},
			&agentv1.Event{Seq: seq, Time: ts, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: -1, Delta: &agentv1.ModelDeltaEvent_Reasoning{Reasoning: tx}}}},
			&agentv1.Event{Seq: math.MaxInt64, Time: ts, RunId: "run_1", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: 2,
				Delta: &agentv1.ModelDeltaEvent_ToolCall{ToolCall: &agentv1.ToolCallDelta{Index: int32(i), Id: tx, Name: "shell", Arguments: tx}}}}},
			&agentv1.Event{Seq: seq, Time: ts, RunId: "run_1", Attempt: int32(i), Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{}}},
			&agentv1.Event{Seq: seq, Time: ts, RunId: "run_1", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
				Delta: &agentv1.ModelDeltaEvent_ToolCall{ToolCall: &agentv1.ToolCallDelta{}}}}},
			&agentv1.Event{Seq: seq, Time: ts, RunId: "run_1", Kind: &agentv1.Event_ToolOutput{ToolOutput: &agentv1.ToolOutputEvent{
				ToolCallId: tx, ToolName: "shell", Stream: agentv1.OutputStream(i % 4), Data: tx}}},
		)
	}
	g := &gateway{json: jsonMarshaler()}
	for _, ev := range events {
		fast, ok := appendEventJSON(nil, ev)
		if !ok {
			t.Errorf("no fast JSON for %v", ev)
			continue
		}
		slow, err := g.json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("fast JSON %s: %v", fast, err)
		}
		if err := json.Unmarshal(slow, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("fast %s\nprotojson %s", fast, slow)
		}
		var back agentv1.Event
		if err := protojson.Unmarshal(fast, &back); err != nil {
			t.Errorf("protojson cannot read %s: %v", fast, err)
		}
	}
	// What protojson writes otherwise or refuses is left to it.
	for _, ev := range []*agentv1.Event{
		{RunId: "run_1", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Delta: &agentv1.ModelDeltaEvent_Text{Text: "bad \xff utf-8"}}}},
		{RunId: "run_1", Kind: &agentv1.Event_ToolOutput{ToolOutput: &agentv1.ToolOutputEvent{Stream: 99}}},
		{Time: &timestamppb.Timestamp{Seconds: 253402300800}, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{}}},
		{Time: &timestamppb.Timestamp{Nanos: -1}, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{}}},
		{Kind: &agentv1.Event_RunStarted{RunStarted: &agentv1.RunStartedEvent{AgentId: "a"}}},
		{},
	} {
		if b, ok := appendEventJSON(nil, ev); ok {
			t.Errorf("fast JSON %s for %v, which protojson writes otherwise or refuses", b, ev)
		}
	}
}

func BenchmarkEventJSON(b *testing.B) {
	g := &gateway{json: jsonMarshaler()}
	ev := &agentv1.Event{Seq: 7, RunId: "run_0123456789abcdef", Time: timestamppb.Now(),
		Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: "123 "}}}}
	b.Run("fast", func(b *testing.B) {
		var buf []byte
		for range b.N {
			buf, _ = appendEventJSON(buf[:0], ev)
		}
	})
	b.Run("protojson", func(b *testing.B) {
		for range b.N {
			_, _ = g.json.Marshal(ev)
		}
	})
}
