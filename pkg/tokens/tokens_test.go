package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Building an encoder takes a good part of a second: the tests share one per
// encoding.
var (
	o200k  = sync.OnceValues(func() (*Encoder, error) { return NewEncoder(O200kBase) })
	cl100k = sync.OnceValues(func() (*Encoder, error) { return NewEncoder(Cl100kBase) })
)

func encoder(t testing.TB, e Encoding) *Encoder {
	t.Helper()
	get := o200k
	if e == Cl100kBase {
		get = cl100k
	}
	enc, err := get()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

var samples = []string{
	"hello world",
	"帮我读一下配置，然后告诉我端口。",
	"func main() {\n\tfmt.Println(\"hi\")\n}\n",
	"  leading spaces and trailing\n\n\n",
	"emoji 🙂🚀 and accents: déjà vu, naïve",
	"it's they're we've I'm you'll he'd",
	"special tokens as text: <|endoftext|> <|endofprompt|> <|fim_prefix|>",
	`{"path":"a.json","n":[1,22,333,4444]}`,
	"",
}

func TestKnownTokens(t *testing.T) {
	tests := []struct {
		enc  Encoding
		text string
		want []int
	}{
		{O200kBase, "hello world", []int{24912, 2375}},
		{Cl100kBase, "hello world", []int{15339, 1917}},
	}
	for _, tt := range tests {
		if got := encoder(t, tt.enc).Encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s %q = %v, want %v", tt.enc, tt.text, got, tt.want)
		}
	}
}

// TestEncoderMatchesTiktoken checks that an Encoder, with its own rank
// table and no tiktoken-go loader, encodes exactly as tiktoken-go's own
// encoding does (given the same embedded ranks), on the samples and on a
// varied corpus: this repository's README, docs and Go sources (English,
// Chinese, code, tables) and random text mixing scripts, digits, emoji, white space,
// contractions and invalid UTF-8.
func TestEncoderMatchesTiktoken(t *testing.T) {
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	t.Cleanup(func() { tiktoken.SetBpeLoader(tiktoken.NewDefaultBpeLoader()) })
	corpus := append(slices.Clone(samples), randomTexts(200)...)
	files, _ := filepath.Glob("../history/*.go")
	docs, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	files = append(files, docs...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(data))
	}
	for _, e := range []Encoding{O200kBase, Cl100kBase} {
		ref, err := tiktoken.GetEncoding(string(e))
		if err != nil {
			t.Fatal(err)
		}
		enc := encoder(t, e)
		if enc.Encoding() != e {
			t.Errorf("Encoding() = %s, want %s", enc.Encoding(), e)
		}
		total := 0
		for _, s := range corpus {
			got, want := enc.Encode(s), ref.EncodeOrdinary(s)
			if !slices.Equal(got, want) {
				t.Errorf("%s %.80q: %d tokens, tiktoken-go says %d", e, s, len(got), len(want))
			}
			if n := enc.Count(s); n != len(want) {
				t.Errorf("%s %.80q: Count %d, tiktoken-go %d", e, s, n, len(want))
			}
			total += len(want)
		}
		if total < 50_000 {
			t.Errorf("%s: the corpus has only %d tokens", e, total)
		}
	}
}

// randomTexts returns n texts of up to 400 pieces drawn from many kinds
// of text, with a fixed seed.
func randomTexts(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{
		"the", "The", " quick", "BROWN", "fox", "'s", "'T", "'re", "'ve", "'m", "'LL", "'d", " ",
		"  ", "\t", "\n", "\r\n", "\n\n\n", "   \n", "0", "12", "345", "67890", "3.14", "-1e9",
		"帮我", "读一下", "配置", "端口。", "日本語", "한국어", "Ελληνικά", "русский", "עברית", "العربية",
		"हिन्दी", "🙂", "🚀🚀", "👩‍💻", "é", "ñ", "ß", "İ", "ǅ", "\u00a0", "\u200b", "\u3000",
		"func", "(", ")", "{", "}", ":=", "==", "!=", "->", "=>", "//", "/*", "*/", "<|endoftext|>",
		"https://example.com/a?b=c", "C:\\path", "$HOME", "snake_case", "camelCase", "x²", "½",
		"\xff", "\xc3", "\xe2\x82", "\x00", "\x7f",
	}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for range rng.IntN(400) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		out[i] = b.String()
	}
	return out
}

// TestRanksAreTheLoaders checks that the rank table holds exactly the
// tokens and ranks tiktoken-go-loader reads from the same embedded files.
func TestRanksAreTheLoaders(t *testing.T) {
	for _, e := range []Encoding{O200kBase, Cl100kBase} {
		s, _ := specFor(e)
		want, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(s.file)
		if err != nil {
			t.Fatal(err)
		}
		table := encoder(t, e).bpe.ranks
		if n := table.len(); n != len(want) {
			t.Errorf("%s: %d tokens, the loader reads %d", e, n, len(want))
		}
		for tok, r := range want {
			if got, ok := table.rank([]byte(tok)); !ok || got != r {
				t.Fatalf("%s: token %q has rank %d (%v), the loader says %d", e, tok, got, ok, r)
			}
		}
		for _, absent := range []string{"", "\x00\x01\x02\x03 not a token at all, surely"} {
			if r, ok := table.rank([]byte(absent)); ok {
				t.Errorf("%s: %q has rank %d", e, absent, r)
			}
		}
	}
}

// TestOffline builds both encoders in a child process whose proxy settings
// point at a closed port and whose cache and temp directories are empty: a
// download would fail, and nothing may be written.
func TestOffline(t *testing.T) {
	if os.Getenv("TOKENS_OFFLINE_CHILD") != "1" {
		t.Parallel() // the child runs on its own
	}
	if os.Getenv("TOKENS_OFFLINE_CHILD") == "1" {
		// Prove the network is unusable here: the proxy refuses.
		c := &http.Client{Timeout: 5 * time.Second}
		if _, err := c.Get("http://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"); err == nil {
			t.Fatal("child: an HTTP request succeeded; the test would prove nothing")
		}
		for _, e := range []Encoding{O200kBase, Cl100kBase} {
			enc, err := NewEncoder(e)
			if err != nil {
				t.Fatalf("child: %v", err)
			}
			if enc.Count("hello world") != 2 {
				t.Fatalf("child: %s counts %d", e, enc.Count("hello world"))
			}
		}
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	cache, tmp := t.TempDir(), t.TempDir()

	cmd := exec.Command(os.Args[0], "-test.run=^TestOffline$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		"TOKENS_OFFLINE_CHILD=1",
		"HTTP_PROXY="+closed, "HTTPS_PROXY="+closed, "http_proxy="+closed, "https_proxy="+closed,
		"NO_PROXY=", "no_proxy=",
		"TIKTOKEN_CACHE_DIR="+cache, "DATA_GYM_CACHE_DIR="+cache, "TMPDIR="+tmp,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("offline child failed: %v\n%s", err, out)
	}
	for _, dir := range []string{cache, tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Errorf("%s holds %d entries after building encoders offline, want none", dir, len(entries))
		}
	}
}

func TestEncodingForModel(t *testing.T) {
	tests := map[string]Encoding{
		"gpt-4o": O200kBase, "gpt-4o-mini": O200kBase, "gpt-4.1": O200kBase, "gpt-4.5-preview": O200kBase,
		"o1": O200kBase, "o3-mini": O200kBase, "gpt-5": O200kBase, "claude-sonnet-4-5": O200kBase,
		"gemini-2.5-pro": O200kBase, "": O200kBase, "openai/gpt-oss-120b": O200kBase,
		"gpt-4": Cl100kBase, "gpt-4-0613": Cl100kBase, "gpt-4-turbo": Cl100kBase, "GPT-4-32k": Cl100kBase,
		"gpt-3.5-turbo": Cl100kBase, "gpt-3.5-turbo-16k": Cl100kBase, "openai/gpt-4": Cl100kBase,
		"text-embedding-3-small": Cl100kBase, "text-embedding-ada-002": Cl100kBase, "davinci-002": Cl100kBase,
	}
	for model, want := range tests {
		if got := EncodingForModel(model); got != want {
			t.Errorf("EncodingForModel(%q) = %s, want %s", model, got, want)
		}
	}
}

func TestEncoders(t *testing.T) {
	s := NewEncoders()
	if _, err := s.Get("p50k_base"); err == nil || !strings.Contains(err.Error(), "unknown encoding") {
		t.Errorf("Get(p50k_base) err = %v", err)
	}
	got := make([]*Encoder, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			enc, err := s.ForModel("gpt-4")
			if err != nil {
				t.Error(err)
			}
			got[i] = enc
		})
	}
	wg.Wait()
	for _, e := range got {
		if e != got[0] || e.Encoding() != Cl100kBase {
			t.Fatalf("ForModel gave %v, want one shared cl100k encoder", got)
		}
	}
}

func TestCounterCachesPerMessage(t *testing.T) {
	enc := encoder(t, O200kBase)
	c := NewCounter(enc)
	if c.Encoder() != enc {
		t.Error("Encoder()")
	}
	m := history.Assistant(history.Reasoning("let me think about it"), history.Text("hello world"))
	without, with := c.Message(m, false), c.Message(m, true)
	if want := MessageOverhead + 2; without != want {
		t.Errorf("Message(no reasoning) = %d, want %d", without, want)
	}
	if want := without + enc.Count("let me think about it"); with != want {
		t.Errorf("Message(reasoning) = %d, want %d", with, want)
	}
	if c.Cached() != 1 {
		t.Errorf("Cached = %d, want 1", c.Cached())
	}
	// A message in history never changes, so its count is not recomputed:
	// changing it behind the counter's back shows the cached count.
	m.Parts = append(m.Parts, history.Text(strings.Repeat("more ", 100)))
	if got := c.Message(m, false); got != without {
		t.Errorf("Message after change = %d, want the cached %d", got, without)
	}
	if got := c.Fresh(m, false); got <= without {
		t.Errorf("Fresh = %d, want more than %d", got, without)
	}
	other := history.User("hi")
	if c.Messages([]*agentv1.Message{m, other}, false) != without+c.Fresh(other, false) || c.Cached() != 2 {
		t.Errorf("Messages / Cached = %d", c.Cached())
	}
	c.Retain([]*agentv1.Message{other})
	if c.Cached() != 1 {
		t.Errorf("Cached after Retain = %d, want 1", c.Cached())
	}
	if got := c.Message(m, false); got == without {
		t.Errorf("Message after Retain = %d: still the old count", got)
	}
}

func TestCounterParts(t *testing.T) {
	enc := encoder(t, O200kBase)
	c := NewCounter(enc)
	n := enc.Count
	json, _ := history.JSONOutput(map[string]int{"port": 8080})
	tests := []struct {
		name string
		msg  *agentv1.Message
		want int
	}{
		{"text", history.User("hello world"), MessageOverhead + 2},
		{"tool call", history.Assistant(history.ToolCall("c1", "read", `{"path":"a.json"}`)),
			MessageOverhead + PartOverhead + n("c1") + n("read") + n(`{"path":"a.json"}`)},
		{"text result", history.ToolText("c1", "read", "hello world"),
			MessageOverhead + PartOverhead + n("c1") + n("read") + 2},
		{"json result", history.Tool(history.ToolResult("c1", "read", json, false)),
			MessageOverhead + PartOverhead + n("c1") + n("read") + n(`{"port":8080}`)},
		{"content result", history.Tool(history.ToolResult("c1", "shot",
			history.ContentOutput(history.Text("hello world"), history.Image(history.URL("https://x/a.png"))), false)),
			MessageOverhead + PartOverhead + n("c1") + n("shot") + 2 + ImageTokens},
		{"empty", &agentv1.Message{}, MessageOverhead},
	}
	for _, tt := range tests {
		if got := c.Fresh(tt.msg, false); got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestMediaEstimates(t *testing.T) {
	enc := encoder(t, O200kBase)
	c := NewCounter(enc)
	big := pngOf(t, 4096, 2048)
	text := "name,port\napi,8080\n"
	tests := []struct {
		name string
		part *agentv1.Part
		want int
	}{
		{"png 1024x1024", history.Image(history.Bytes("image/png", pngOf(t, 1024, 1024))), 765},
		{"png 512x512", history.Image(history.Bytes("", pngOf(t, 512, 512))), 255},
		{"png 4096x2048 as data URL", history.Image(history.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(big))), 1105},
		{"png 4096x2048 as an image file", history.File(history.Bytes("image/png", big)), 1105},
		{"image by URL", history.Image(history.URL("https://x/a.png")), ImageTokens},
		{"unreadable image", history.Image(history.Bytes("image/webp", []byte("RIFF...."))), ImageTokens},
		{"audio inline", history.Audio(history.Bytes("audio/mpeg", make([]byte, 500_000))), 1000},
		{"tiny audio", history.Audio(history.Bytes("audio/wav", make([]byte, 10))), MinMediaTokens},
		{"audio by URL", history.Audio(history.URL("https://x/a.mp3")), AudioTokens},
		{"video file inline", history.File(history.Bytes("video/mp4", make([]byte, 5_000_000))), 10_000},
		{"video by URL", history.Video(history.URL("https://x/v.mp4")), VideoTokens},
		{"pdf inline", history.File(history.Bytes("application/pdf", make([]byte, 100_000))), 2000},
		{"pdf by URL", history.File(history.URL("https://x/a.pdf")), FileTokens},
		{"csv inline", history.File(history.Bytes("text/csv; charset=utf-8", []byte(strings.Repeat(text, 50)))),
			enc.Count(strings.Repeat(text, 50))},
		{"json data URL", history.File(history.URL("data:application/json;base64," +
			base64.StdEncoding.EncodeToString([]byte(strings.Repeat(`{"a":[1,2,3]}`, 40))))),
			enc.Count(strings.Repeat(`{"a":[1,2,3]}`, 40))},
	}
	for _, tt := range tests {
		if got := c.Fresh(history.UserParts(tt.part), false) - MessageOverhead; got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSystemAndTools(t *testing.T) {
	enc := encoder(t, O200kBase)
	c := NewCounter(enc)
	if c.System("") != 0 {
		t.Error("System(\"\") != 0")
	}
	if got, want := c.System("hello world"), 2+MessageOverhead; got != want {
		t.Errorf("System = %d, want %d", got, want)
	}
	tools := []*pluginv1.ToolSpec{
		{Name: "read", Description: "Read a file.", InputSchemaJson: `{"type":"object","properties":{"path":{"type":"string"}}}`},
		{Name: "ls"},
	}
	want := enc.Count("read\nRead a file.\n"+tools[0].InputSchemaJson) + enc.Count("ls\n\n") + 2*ToolOverhead
	for range 2 { // the second time from the cache
		if got := c.Tools(tools); got != want {
			t.Errorf("Tools = %d, want %d", got, want)
		}
	}
	for i := range maxTexts + 1 { // the text cache starts over when full
		c.System(strings.Repeat("x ", i+1))
	}
	if n := len(c.texts); n > maxTexts {
		t.Errorf("text cache holds %d, want at most %d", n, maxTexts)
	}
}

// TestCounterShortStrings checks that counts through the short-string
// cache equal tiktoken's, and that the cache stays bounded.
func TestCounterShortStrings(t *testing.T) {
	enc := encoder(t, O200kBase)
	c := NewCounter(enc)
	for i := range 2*maxShort + 1 {
		id := fmt.Sprintf("call_%024x", i*7919)
		for _, m := range []*agentv1.Message{ // the id and name twice: cache misses, then hits
			history.Assistant(history.ToolCall(id, "read_file", `{"path":"a.go"}`)),
			history.ToolText(id, "read_file", "ok"),
		} {
			want := MessageOverhead + PartOverhead + enc.Count(id) + enc.Count("read_file")
			if m.GetRole() == agentv1.Role_ROLE_TOOL {
				want += enc.Count("ok")
			} else {
				want += enc.Count(`{"path":"a.go"}`)
			}
			if got := c.Fresh(m, false); got != want {
				t.Fatalf("message %d: Fresh = %d, want %d", i, got, want)
			}
		}
	}
	if n := len(c.short); n > maxShort {
		t.Errorf("short-string cache holds %d, want at most %d", n, maxShort)
	}
}
