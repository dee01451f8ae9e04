package llm

import (
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// media converts an image, audio, video or file part to an eino file part.
// keep is false when the capability is off and the fallback is strip.
func (cv *converter) media(i, j int, p *agentv1.Part) (schema.MessageInputPart, bool, error) {
	var file *agentv1.FilePart
	var kind string // the class implied by a legacy part
	switch k := p.GetKind().(type) {
	case *agentv1.Part_Image:
		file, kind = k.Image, "image"
	case *agentv1.Part_Audio:
		file, kind = k.Audio, "audio"
	case *agentv1.Part_Video:
		file, kind = k.Video, "video"
	case *agentv1.Part_File:
		file, kind = k.File, "file"
	}
	common, err := fileSource(kind, file)
	if err != nil {
		return schema.MessageInputPart{}, false, invalidMessage(i, j, "%v", err)
	}
	class := mediaClass(common.MIMEType)
	allowed := map[string]bool{"image": cv.caps.Image, "audio": cv.caps.Audio, "video": cv.caps.Video, "file": cv.caps.File}[class]
	if !allowed {
		if cv.fallback == MediaFallbackStrip {
			return schema.MessageInputPart{}, false, nil
		}
		return schema.MessageInputPart{}, false, &Error{
			Kind: provider.KindRequest, Code: "unsupported_media",
			Message: fmt.Sprintf("message %d part %d is %s (%s) but capabilities.%s is false; set media_fallback to strip to send the text without it",
				i, j, article(class), common.MIMEType, class),
		}
	}
	return schema.MessageInputPart{
		Type: schema.ChatMessagePartTypeFileURL,
		File: &schema.MessageInputFile{MessagePartCommon: common, Name: file.GetFilename()},
	}, true, nil
}

// fileSource resolves where a file part's bytes are and its media type:
// inline bytes and data URLs become base64 data, other URLs stay URLs. A
// missing media type is taken from the data URL, sniffed from the bytes or
// guessed from the URL's extension, and else is "image/*", "audio/*",
// "video/*" for legacy parts or application/octet-stream.
func fileSource(kind string, file *agentv1.FilePart) (schema.MessagePartCommon, error) {
	var common schema.MessagePartCommon
	mt := strings.TrimSpace(file.GetMediaType())
	switch src := file.GetSource().(type) {
	case *agentv1.FilePart_Data:
		if len(src.Data) == 0 {
			return common, fmt.Errorf("the %s part has no data", kind)
		}
		b := base64.StdEncoding.EncodeToString(src.Data)
		common.Base64Data = &b
		if mt == "" {
			if sniffed := http.DetectContentType(src.Data); !strings.HasPrefix(sniffed, "text/plain") && sniffed != "application/octet-stream" {
				mt = sniffed
			}
		}
	case *agentv1.FilePart_Url:
		u := strings.TrimSpace(src.Url)
		if u == "" {
			return common, fmt.Errorf("the %s part has an empty URL", kind)
		}
		if strings.HasPrefix(u, "data:") {
			dataType, data, err := parseDataURL(u)
			if err != nil {
				return common, fmt.Errorf("the %s part: %w", kind, err)
			}
			common.Base64Data = &data
			if mt == "" {
				mt = dataType
			}
			break
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Scheme == "" {
			return common, fmt.Errorf("the %s part has an invalid URL", kind)
		}
		common.URL = &u
		if mt == "" {
			mt = mime.TypeByExtension(strings.ToLower(path.Ext(parsed.Path)))
		}
	default:
		return common, fmt.Errorf("the %s part has neither data nor a URL", kind)
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	if mt == "" {
		switch kind {
		case "image", "audio", "video":
			mt = kind + "/*"
		default:
			mt = "application/octet-stream"
		}
	}
	common.MIMEType = mt
	return common, nil
}

// parseDataURL reads data:[<type>][;base64],<data> and returns the type and
// the payload as base64.
func parseDataURL(s string) (string, string, error) {
	if mt, data, ok := provider.ParseDataURL(s); ok {
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			if _, err2 := base64.RawStdEncoding.DecodeString(data); err2 != nil {
				return "", "", fmt.Errorf("the data URL is not valid base64")
			}
		}
		return mt, data, nil
	}
	meta, data, ok := strings.Cut(strings.TrimPrefix(s, "data:"), ",")
	if !ok {
		return "", "", fmt.Errorf("malformed data URL")
	}
	raw, err := url.PathUnescape(data)
	if err != nil {
		return "", "", fmt.Errorf("the data URL is not valid: %w", err)
	}
	mt, _, _ := strings.Cut(meta, ";")
	return mt, base64.StdEncoding.EncodeToString([]byte(raw)), nil
}

// mediaClass maps a media type to the capability that governs it.
func mediaClass(mt string) string {
	switch {
	case strings.HasPrefix(mt, "image/"):
		return "image"
	case strings.HasPrefix(mt, "audio/"):
		return "audio"
	case strings.HasPrefix(mt, "video/"):
		return "video"
	}
	return "file"
}

func article(class string) string {
	if class == "image" || class == "audio" {
		return "an " + class
	}
	return "a " + class
}
