package interceptor

import (
	"fmt"
	"sort"

	"github.com/agentcore/agentcore/pkg/tool/truncate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MessageRoom is what a response or event leaves of -max-message-bytes
// for gRPC's framing and the fields beside the large ones.
const MessageRoom = 1 << 10

// leaf is one string or bytes value in a message.
type leaf struct {
	msg  protoreflect.Message
	fd   protoreflect.FieldDescriptor
	list protoreflect.List // set for an element of a repeated field
	idx  int
	size int
}

func (l leaf) get() protoreflect.Value {
	if l.list != nil {
		return l.list.Get(l.idx)
	}
	return l.msg.Get(l.fd)
}

func (l leaf) set(v protoreflect.Value) {
	if l.list != nil {
		l.list.Set(l.idx, v)
		return
	}
	l.msg.Set(l.fd, v)
}

// leaves lists the string and bytes values of m, nested messages included.
func leaves(m protoreflect.Message, out []leaf) []leaf {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					out = leaves(mv.Message(), out)
					return true
				})
			}
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				switch fd.Kind() {
				case protoreflect.StringKind:
					out = append(out, leaf{msg: m, fd: fd, list: l, idx: i, size: len(l.Get(i).String())})
				case protoreflect.BytesKind:
					out = append(out, leaf{msg: m, fd: fd, list: l, idx: i, size: len(l.Get(i).Bytes())})
				case protoreflect.MessageKind, protoreflect.GroupKind:
					out = leaves(l.Get(i).Message(), out)
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			out = append(out, leaf{msg: m, fd: fd, size: len(v.String())})
		case fd.Kind() == protoreflect.BytesKind:
			out = append(out, leaf{msg: m, fd: fd, size: len(v.Bytes())})
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			out = leaves(v.Message(), out)
		}
		return true
	})
	return out
}

// FitMessage returns m, or when its encoding is larger than limit bytes a
// copy whose largest strings are cut from the middle with a note (and
// whose largest bytes values are emptied) until it fits: no response or
// event exceeds the message limit, and what it leaves out says so.
func FitMessage[M proto.Message](m M, limit int) M {
	over := proto.Size(m) - limit
	if over <= 0 {
		return m
	}
	cp := proto.Clone(m).(M)
	for range 4 {
		ls := leaves(cp.ProtoReflect(), nil)
		sort.Slice(ls, func(i, j int) bool { return ls[i].size > ls[j].size })
		// The level every value above it is cut to, so that the cuts add
		// up to the excess (notes included).
		level := 0
		for k := 1; k <= len(ls); k++ {
			next := 0
			if k < len(ls) {
				next = ls[k].size
			}
			freed := 0
			for _, l := range ls[:k] {
				freed += l.size - next - NoteSize
			}
			if freed >= over {
				// Lift the level as far as the excess allows.
				level = next + (freed-over)/k
				break
			}
		}
		for _, l := range ls {
			if l.size <= level {
				break
			}
			v := l.get()
			if l.fd.Kind() == protoreflect.BytesKind {
				l.set(protoreflect.ValueOfBytes(nil))
				continue
			}
			l.set(protoreflect.ValueOfString(CutForMessage(v.String(), level)))
		}
		if over = proto.Size(cp) - limit; over <= 0 {
			break
		}
	}
	return cp
}

// NoteSize bounds the note CutForMessage puts in place of what it cuts.
const NoteSize = 160

// CutForMessage cuts s to about keep bytes from the middle, at UTF-8
// boundaries, with a note.
func CutForMessage(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	note := fmt.Sprintf("\n[… %d of %d bytes cut: this value made the message larger than the server's limit (-max-message-bytes)]\n", len(s)-keep, len(s))
	return truncate.Middle(s, keep, note)
}
