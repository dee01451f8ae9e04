package texttool

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// decodeLenient decodes one or more JSON values from s, repairing common
// mistakes (see repair) when s is not valid as written.
func decodeLenient(s string) ([]any, error) {
	vals, err := decodeAll(s)
	if err == nil {
		return vals, nil
	}
	if fixed := repair(s); fixed != s {
		if vals, err2 := decodeAll(fixed); err2 == nil {
			return vals, nil
		}
	}
	return nil, err
}

// decodeAll decodes a sequence of JSON values separated by white space.
func decodeAll(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errors.New(strings.TrimPrefix(err.Error(), "json: "))
			}
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("no JSON value")
	}
	return out, nil
}

// repair fixes the JSON mistakes models make most: trailing commas, unquoted
// object keys, single-quoted strings and Python literals (True, False, None).
// It makes one pass and never fails; the caller decodes the result again.
func repair(src string) string {
	var out strings.Builder
	out.Grow(len(src) + 16)
	i := 0
	for i < len(src) {
		ch := src[i]
		switch {
		case ch == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			out.WriteString(src[i:j])
			i = j
		case ch == '\'':
			out.WriteByte('"')
			j := i + 1
			for j < len(src) && src[j] != '\'' {
				switch {
				case src[j] == '\\' && j+1 < len(src) && src[j+1] == '\'':
					out.WriteByte('\'')
					j += 2
				case src[j] == '\\' && j+1 < len(src):
					out.WriteString(src[j : j+2])
					j += 2
				case src[j] == '"':
					out.WriteString(`\"`)
					j++
				default:
					out.WriteByte(src[j])
					j++
				}
			}
			out.WriteByte('"')
			i = min(j+1, len(src))
		case ch == ',':
			k := i + 1
			for k < len(src) && isSpace(src[k]) {
				k++
			}
			if k < len(src) && (src[k] == '}' || src[k] == ']') {
				i++
				continue
			}
			out.WriteByte(ch)
			i++
		case isIdentStart(ch):
			j := i
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			word := src[i:j]
			k := j
			for k < len(src) && isSpace(src[k]) {
				k++
			}
			switch {
			case k < len(src) && src[k] == ':':
				out.WriteString(`"` + word + `"`)
			case word == "True":
				out.WriteString("true")
			case word == "False":
				out.WriteString("false")
			case word == "None":
				out.WriteString("null")
			default:
				out.WriteString(word)
			}
			i = j
		default:
			out.WriteByte(ch)
			i++
		}
	}
	return out.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentByte(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }
