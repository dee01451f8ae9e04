package tokens

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"unicode/utf8"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Media estimates. Providers count media in their own ways and none tells
// before the request, so these are documented guesses, on the high side:
//
//   - An image whose size can be read (PNG, JPEG or GIF, inline or as a data
//     URL) costs what OpenAI charges in high detail: scaled to fit 2048×2048,
//     then its short side to 768, 85 + 170 per 512-pixel tile (a 1024×1024
//     image is 765). An image given by URL or in another format costs
//     ImageTokens. Anthropic's count for the same image is of the same size
//     (width×height/750, at most about 1,600).
//   - Audio and video given inline cost one token per MediaBytesPerToken bytes
//     (about Gemini's 32 tokens a second of 128 kbit/s audio, and its 263 a
//     second of ~1 Mbit/s video); by URL, AudioTokens and VideoTokens.
//   - A text file given inline (text/*, JSON, XML, YAML, CSV…) is counted as
//     its text. Other files given inline (PDF…) cost one token per
//     FileBytesPerToken bytes (a PDF page is 1,500–3,000 tokens); by URL,
//     FileTokens.
//   - Every media part costs at least MinMediaTokens.
const (
	ImageTokens        = 765
	AudioTokens        = 1000
	VideoTokens        = 8000
	FileTokens         = 1500
	MediaBytesPerToken = 500
	FileBytesPerToken  = 50
	MinMediaTokens     = 85
)

// media estimates a media part; kind is the part's kind, refined by the
// media type for file parts.
func (c *Counter) media(kind string, f *agentv1.FilePart) int {
	mt := strings.ToLower(f.GetMediaType())
	var data []byte
	inline := false
	switch src := f.GetSource().(type) {
	case *agentv1.FilePart_Data:
		data, inline = src.Data, true
	case *agentv1.FilePart_Url:
		if d, err := history.ParseDataURL(src.Url); err == nil {
			data, inline = d.Data, true
			if mt == "" {
				mt = d.MediaType
			}
		}
	}
	if kind == "file" {
		switch {
		case strings.HasPrefix(mt, "image/"):
			kind = "image"
		case strings.HasPrefix(mt, "audio/"):
			kind = "audio"
		case strings.HasPrefix(mt, "video/"):
			kind = "video"
		}
	}
	n := 0
	switch kind {
	case "image":
		n = ImageTokens
		if w, h, ok := imageSize(data); ok {
			n = imageTiles(w, h)
		}
	case "audio", "video":
		n = AudioTokens
		if kind == "video" {
			n = VideoTokens
		}
		if inline {
			n = len(data) / MediaBytesPerToken
		}
	default:
		n = FileTokens
		if inline {
			if isText(mt, data) {
				n = c.enc.Count(string(data))
			} else {
				n = len(data) / FileBytesPerToken
			}
		}
	}
	return max(n, MinMediaTokens)
}

// imageSize reads the size of a PNG, JPEG or GIF image from its header.
func imageSize(data []byte) (w, h int, ok bool) {
	if len(data) == 0 {
		return 0, 0, false
	}
	var cfg image.Config
	var err error
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG")):
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte("\xff\xd8")):
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte("GIF8")):
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
	default:
		return 0, 0, false
	}
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// imageTiles is OpenAI's high-detail image cost.
func imageTiles(w, h int) int {
	fw, fh := float64(w), float64(h)
	if m := max(fw, fh); m > 2048 {
		fw, fh = fw*2048/m, fh*2048/m
	}
	if m := min(fw, fh); m > 768 {
		fw, fh = fw*768/m, fh*768/m
	}
	tiles := ceilDiv(int(fw+0.5), 512) * ceilDiv(int(fh+0.5), 512)
	return 85 + 170*tiles
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// isText reports whether a file's content is text to count as such.
func isText(mediaType string, data []byte) bool {
	mt, _, _ := strings.Cut(mediaType, ";")
	mt = strings.TrimSpace(mt)
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/yaml", mt == "application/x-yaml",
		mt == "application/javascript", mt == "application/x-ndjson",
		mt == "application/csv":
		return utf8.Valid(data)
	}
	return false
}
