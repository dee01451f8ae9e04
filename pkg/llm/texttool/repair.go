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
func repair(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(s))
			b.WriteString(s[i:j])
			i = j
		case c == '\'':
			b.WriteByte('"')
			j := i + 1
			for j < len(s) && s[j] != '\'' {
				switch {
				case s[j] == '\\' && j+1 < len(s) && s[j+1] == '\'':
					b.WriteByte('\'')
					j += 2
				case s[j] == '\\' && j+1 < len(s):
					b.WriteString(s[j : j+2])
					j += 2
				case s[j] == '"':
					b.WriteString(`\"`)
					j++
				default:
					b.WriteByte(s[j])
					j++
				}
			}
			b.WriteByte('"')
			i = min(j+1, len(s))
		case c == ',':
			k := i + 1
			for k < len(s) && isSpace(s[k]) {
				k++
			}
			if k < len(s) && (s[k] == '}' || s[k] == ']') {
				i++
				continue
			}
			b.WriteByte(c)
			i++
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && isSpace(s[k]) {
				k++
			}
			switch {
			case k < len(s) && s[k] == ':':
				b.WriteString(`"` + word + `"`)
			case word == "True":
				b.WriteString("true")
			case word == "False":
				b.WriteString("false")
			case word == "None":
				b.WriteString("null")
			default:
				b.WriteString(word)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentByte(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }
