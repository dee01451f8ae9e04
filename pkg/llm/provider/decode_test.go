package provider

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type inner struct {
		S string `json:"s"`
	}
	type target struct {
		A string   `json:"a"`
		N int      `json:"n"`
		L []inner  `json:"l"`
		O *inner   `json:"o"`
		J JSONText `json:"j"`
		K string   `json:"k"`
	}
	tests := []struct {
		name    string
		in      string
		want    target
		wantErr bool
	}{
		{"plain", `{"a":"x","n":2,"l":[{"s":"y"}],"o":{"s":"z"},"j":"{\"q\":1}","k":"k"}`,
			target{A: "x", N: 2, L: []inner{{S: "y"}}, O: &inner{S: "z"}, J: `{"q":1}`, K: "k"}, false},
		{"unknown fields of every type", `{"u1":"s","u2":1.5,"u3":{"a":"no"},"u4":[1,{"k":"no"}],"u5":null,"u6":true,"k":"k"}`,
			target{K: "k"}, false},
		{"known fields of the wrong type read as empty", `{"a":{"x":1},"n":"2","l":{"s":"y"},"o":[1],"k":"k"}`,
			target{O: &inner{}, K: "k"}, false},
		{"arguments as an object", `{"j":{"q": [1, 2]}}`, target{J: `{"q":[1,2]}`}, false},
		{"arguments null", `{"j":null}`, target{}, false},
		{"not JSON", `{"a":`, target{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got target
			err := Decode([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.A != tt.want.A || got.N != tt.want.N || len(got.L) != len(tt.want.L) || got.J != tt.want.J || got.K != tt.want.K ||
				(got.O == nil) != (tt.want.O == nil) || got.O != nil && *got.O != *tt.want.O {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDecodeCopiesStrings guards the reason for sonic's standard config:
// decoded strings must not alias the buffer, which the SSE reader reuses.
func TestDecodeCopiesStrings(t *testing.T) {
	buf := []byte(`{"c":"hello"}`)
	var v struct {
		C string `json:"c"`
	}
	if err := Decode(buf, &v); err != nil {
		t.Fatal(err)
	}
	copy(buf, strings.Repeat("x", len(buf)))
	if v.C != "hello" {
		t.Fatalf("decoded string changed with its buffer: %q", v.C)
	}
}

func TestType(t *testing.T) {
	for in, want := range map[string]string{`{"x":{"type":"no"},"type":"yes"}`: "yes", `{"type":1}`: "", `[1]`: "", `{}`: ""} {
		if got, err := Type([]byte(in)); err != nil || got != want {
			t.Errorf("Type(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestUnreadableEvent(t *testing.T) {
	tests := []struct {
		name, event, data, want string
	}{
		{"named", "content_block_delta", `{"type":"content_block_delta","index":0,"delta":`,
			`x: stream event 7 ("content_block_delta") is not JSON; its data begins "{\"type\":\"content_block_d"…`},
		{"unnamed and short", "", `<html>`, `x: stream event 7 is not JSON; its data begins "<html>"`},
		{"cut at a rune's start", "", strings.Repeat("a", 23) + "é and more", `x: stream event 7 is not JSON; its data begins "` + strings.Repeat("a", 23) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := UnreadableEvent("x: ", 7, tt.event, []byte(tt.data), nil)
			if e.Kind != KindUnknown || e.Message != tt.want {
				t.Errorf("got %s %q\nwant %q", e.Kind, e.Message, tt.want)
			}
		})
	}
}
