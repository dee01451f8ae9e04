package interceptor

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentcore/agentcore/pkg/redact"
)

// Codec is gRPC's proto codec, except for a request holding a string that
// is not valid UTF-8, which the proto codec refuses and grpc-go then
// reports as INTERNAL before any interceptor runs. This codec decodes such
// a request with the bad strings replaced, and notes the first bad field's
// path against the message; the interceptors find the note (take) and
// fail the call INVALID_ARGUMENT naming the field.
//
// On the way out it keeps the server-held secrets out of every response and
// streamed message: a string or bytes field travels as its raw bytes, so a
// message whose encoding does not contain a secret holds none, and only
// one that does is encoded again from a redacted copy
// (redact.Secrets.RedactMessage). The check is a byte search over what is
// sent anyway, where walking every message's fields cost more than its
// encoding.
//
// A response that never changes and is sent many times (ListTools') can be
// frozen (Frozen): its encoding, made once, is what the codec sends for it.
type Codec struct {
	encoding.CodecV2
	notes   *sync.Map       // request message -> the path of its first invalid string
	secrets *redact.Secrets // nil: nothing to keep out
	frozen  *Frozen         // nil: none
}

// NewCodec returns the codec keeping secrets out, sending the encodings
// frozen holds (either may be nil).
func NewCodec(secrets *redact.Secrets, frozen *Frozen) Codec {
	return Codec{CodecV2: encoding.GetCodecV2(grpcproto.Name), notes: &sync.Map{}, secrets: secrets, frozen: frozen}
}

// Frozen holds the encodings of responses made once and sent many times as
// they are: a frozen message must never change after.
type Frozen struct {
	secrets *redact.Secrets
	m       sync.Map // proto.Message -> []byte, its encoding
}

// NewFrozen returns an empty set of frozen encodings, which keep secrets
// out as the codec does.
func NewFrozen(secrets *redact.Secrets) *Frozen { return &Frozen{secrets: secrets} }

// Freeze keeps m's encoding (secrets kept out) for the codec to send.
func (f *Frozen) Freeze(m proto.Message) {
	out, err := NewCodec(f.secrets, nil).Marshal(m)
	if err != nil {
		return // the codec encodes it at each call, and says what is wrong
	}
	f.m.Store(m, out.Materialize())
	out.Free()
}

// Forget lets m's encoding go: a call still sending m encodes it itself.
func (f *Frozen) Forget(m proto.Message) { f.m.Delete(m) }

// Encoding returns the encoding frozen for m, if any.
func (f *Frozen) Encoding(m any) ([]byte, bool) {
	b, ok := f.m.Load(m)
	if !ok {
		return nil, false
	}
	return b.([]byte), true
}

// Marshal encodes v, from a redacted copy when its encoding holds a
// server-held secret.
func (c Codec) Marshal(v any) (mem.BufferSlice, error) {
	if c.frozen != nil {
		if b, ok := c.frozen.Encoding(v); ok {
			return mem.BufferSlice{mem.SliceBuffer(b)}, nil
		}
	}
	out, err := c.CodecV2.Marshal(v)
	if err != nil || c.secrets == nil || !c.secrets.HasHeld() {
		return out, err
	}
	hit := false
	if len(out) == 1 {
		hit = c.secrets.Holds(out[0].ReadOnlyData())
	} else {
		hit = c.secrets.Holds(out.Materialize())
	}
	if !hit {
		return out, nil
	}
	clean := c.secrets.RedactMessage(v)
	if clean == v { // no secret in a field after all: the bytes met by chance
		return out, nil
	}
	out.Free()
	return c.CodecV2.Marshal(clean)
}

// Unmarshal decodes data into v; a string that is not valid UTF-8 is
// replaced, and noted against v for take.
func (c Codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil || !strings.Contains(err.Error(), "UTF-8") {
		return err
	}
	var m proto.Message
	switch v := v.(type) {
	case protoadapt.MessageV2:
		m = v
	case protoadapt.MessageV1:
		m = protoadapt.MessageV2Of(v)
	default:
		return err
	}
	raw := data.Materialize()
	md := m.ProtoReflect().Descriptor()
	path, ok := invalidUTF8Path(raw, md, "")
	if !ok {
		return err
	}
	if uerr := proto.Unmarshal(sanitizeUTF8(raw, md), m); uerr != nil {
		return err
	}
	c.notes.Store(v, path)
	return nil
}

// take returns, and forgets, the invalid field noted for a request.
func (c Codec) take(v any) error {
	path, ok := c.notes.LoadAndDelete(v)
	if !ok {
		return nil
	}
	return invalidField(path.(string), "is not valid UTF-8: every string must be UTF-8 (send binary data as a file part's bytes)")
}

// sanitizeUTF8 re-encodes the wire form of a message of type md with every
// string made valid UTF-8 (and lengths fixed up).
func sanitizeUTF8(b []byte, md protoreflect.MessageDescriptor) []byte {
	var out []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return out
		}
		tag := b[:n]
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return out
		}
		val := b[:n]
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			out = append(append(out, tag...), val...)
			continue
		}
		content, _ := protowire.ConsumeBytes(val)
		switch fd.Kind() {
		case protoreflect.StringKind:
			content = []byte(strings.ToValidUTF8(string(content), "\uFFFD"))
		case protoreflect.MessageKind: // map entries too
			content = sanitizeUTF8(content, fd.Message())
		}
		out = protowire.AppendBytes(append(out, tag...), content)
	}
	return out
}

// invalidUTF8Path walks the wire form of a message of type md and returns
// the path of the first string field that is not UTF-8, e.g.
// "start.input[0].text".
func invalidUTF8Path(b []byte, md protoreflect.MessageDescriptor, prefix string) (string, bool) {
	seen := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", false
		}
		val := b[:n]
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		if fd == nil || typ != protowire.BytesType {
			continue
		}
		content, _ := protowire.ConsumeBytes(val)
		name := prefix + string(fd.Name())
		if fd.IsList() {
			name += "[" + strconv.Itoa(seen[num]) + "]"
			seen[num]++
		}
		switch {
		case fd.IsMap():
			key, value := mapEntry(content)
			if fd.MapKey().Kind() == protoreflect.StringKind && !utf8.Valid(key) {
				return name, true
			}
			name += "[" + strconv.Quote(strings.ToValidUTF8(string(key), "\uFFFD")) + "]"
			switch fd.MapValue().Kind() {
			case protoreflect.StringKind:
				if !utf8.Valid(value) {
					return name, true
				}
			case protoreflect.MessageKind:
				if p, ok := invalidUTF8Path(value, fd.MapValue().Message(), name+"."); ok {
					return p, true
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			if !utf8.Valid(content) {
				return name, true
			}
		case fd.Kind() == protoreflect.MessageKind:
			if p, ok := invalidUTF8Path(content, fd.Message(), name+"."); ok {
				return p, true
			}
		}
	}
	return "", false
}

// mapEntry splits a map entry into its key (field 1) and value (field 2).
func mapEntry(b []byte) (key, value []byte) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return
		}
		if typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[:n])
			switch num {
			case 1:
				key = v
			case 2:
				value = v
			}
		}
		b = b[n:]
	}
	return
}
