package tool

import (
	"strings"
	"testing"
)

func TestChunkDecoderKeepsUTF8Whole(t *testing.T) {
	var got []string
	d := &chunkDecoder{onOutput: func(c Chunk) { got = append(got, c.Data) }}
	euro := []byte("€") // 3 bytes
	d.write(2, append([]byte("a"), euro[:1]...))
	d.write(2, euro[1:2])
	d.write(2, append(euro[2:], 'b'))
	d.write(2, []byte{0xff, 'c'})
	d.write(2, euro[:2])
	d.flush()
	if strings.Join(got, "|") != "a|€b|\uFFFDc|\uFFFD" {
		t.Fatalf("chunks = %q", got)
	}
}
