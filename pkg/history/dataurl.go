package history

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DataURL is a parsed data URL (RFC 2397).
type DataURL struct {
	// MediaType without parameters, e.g. image/png. Empty when the URL gives
	// none (RFC 2397 then means text/plain).
	MediaType string
	// Data is the decoded content.
	Data []byte
}

// ParseDataURL parses "data:[<media type>][;base64],<data>". It fails when s
// is not a data URL or its data does not decode.
func ParseDataURL(s string) (DataURL, error) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		if len(s) >= 5 && strings.EqualFold(s[:5], "data:") {
			rest = s[5:]
		} else {
			return DataURL{}, errors.New("not a data URL")
		}
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return DataURL{}, errors.New("data URL without a comma")
	}
	params := strings.Split(meta, ";")
	isBase64 := false
	if n := len(params); n > 1 && strings.EqualFold(strings.TrimSpace(params[n-1]), "base64") {
		isBase64 = true
		params = params[:n-1]
	}
	d := DataURL{MediaType: strings.ToLower(strings.TrimSpace(params[0]))}
	if isBase64 {
		b, err := decodeBase64(payload)
		if err != nil {
			return DataURL{}, fmt.Errorf("data URL: %w", err)
		}
		d.Data = b
		return d, nil
	}
	text, err := url.PathUnescape(payload)
	if err != nil {
		return DataURL{}, fmt.Errorf("data URL: %w", err)
	}
	d.Data = []byte(text)
	return d, nil
}

// decodeBase64 accepts padded and unpadded, standard and URL alphabets.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}
