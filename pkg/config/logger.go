package config

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Logger returns an hclog logger writing to w in the configured format and
// level. In JSON, values print as a person reads them in the text format:
// enums (proto enums, gRPC codes) by name instead of number, durations as
// "1.5s" instead of integer nanoseconds.
func (c *Config) Logger(name string, w io.Writer) hclog.Logger {
	return c.logger(name, hclog.LevelFromString(c.LogLevel), w)
}

// AuditLogger returns the logger of the audit lines (module NAME.audit): the
// format of Logger, but always at INFO, whatever the log level, so that
// -log-level warn or error keeps the audit trail.
func (c *Config) AuditLogger(name string, w io.Writer) hclog.Logger {
	return c.logger(name, hclog.Info, w).Named("audit")
}

func (c *Config) logger(name string, level hclog.Level, w io.Writer) hclog.Logger {
	l := hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		JSONFormat: c.LogFormat == "json",
		Output:     w,
	})
	if c.LogFormat == "json" {
		return readableLogger{l}
	}
	return l
}

// readableLogger is an hclog.Logger that passes every value through
// readable before the JSON encoder sees it.
type readableLogger struct{ hclog.Logger }

func (l readableLogger) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(level, msg, readableArgs(args)...)
}
func (l readableLogger) Trace(msg string, args ...any) { l.Logger.Trace(msg, readableArgs(args)...) }
func (l readableLogger) Debug(msg string, args ...any) { l.Logger.Debug(msg, readableArgs(args)...) }
func (l readableLogger) Info(msg string, args ...any)  { l.Logger.Info(msg, readableArgs(args)...) }
func (l readableLogger) Warn(msg string, args ...any)  { l.Logger.Warn(msg, readableArgs(args)...) }
func (l readableLogger) Error(msg string, args ...any) { l.Logger.Error(msg, readableArgs(args)...) }

func (l readableLogger) With(args ...any) hclog.Logger {
	return readableLogger{l.Logger.With(readableArgs(args)...)}
}
func (l readableLogger) Named(name string) hclog.Logger { return readableLogger{l.Logger.Named(name)} }
func (l readableLogger) ResetNamed(name string) hclog.Logger {
	return readableLogger{l.Logger.ResetNamed(name)}
}

// readableArgs converts the values of key/value pairs (keys stay).
func readableArgs(args []any) []any {
	var out []any
	for i := 1; i < len(args); i += 2 {
		v := readable(args[i])
		// Values of kinds readable never converts (slices, maps) cannot be compared.
		if t := reflect.TypeOf(v); t == nil || !t.Comparable() || v == args[i] {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = v
	}
	if out == nil {
		return args
	}
	return out
}

// readable returns a duration as its text, and a named integer type with a
// String method (an enum) as its name; other values as they are.
func readable(v any) any {
	switch x := v.(type) {
	case time.Duration:
		return x.String()
	case json.Marshaler, encoding.TextMarshaler, error:
		return v
	case fmt.Stringer:
		switch reflect.TypeOf(v).Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return x.String()
		}
	}
	return v
}
