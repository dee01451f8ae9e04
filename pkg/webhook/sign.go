package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks' headers: the message's id (the same at every attempt),
// the attempt's time in Unix seconds, and the signatures.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a Standard Webhooks secret: "whsec_" then the key in
// base64.
const secretPrefix = "whsec_"

// MinKeyBytes is the shortest signing key accepted (the spec's advice:
// 24 to 64 random bytes).
const MinKeyBytes = 24

// DefaultTolerance is how far a message's timestamp may be from the
// receiver's clock for Verify, the spec's advice.
const DefaultTolerance = 5 * time.Minute

// ParseSecret reads a signing secret as Standard Webhooks writes it:
// "whsec_" followed by the key in standard base64 (the prefix may be left
// out). The key must have MinKeyBytes bytes at least. Make one with
// `echo "whsec_$(head -c 32 /dev/urandom | base64)"`.
func ParseSecret(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), secretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New(`the webhook secret is not "whsec_" followed by base64 (make one with: echo "whsec_$(head -c 32 /dev/urandom | base64)")`)
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("the webhook secret's key has %d bytes; give %d random bytes at least", len(key), MinKeyBytes)
	}
	return key, nil
}

// Sign returns the webhook-signature header value of a message: "v1,"
// then the base64 HMAC-SHA256, under key, of "ID.TIMESTAMP.BODY".
func Sign(key []byte, id string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Verify checks a received message as a receiver does: its timestamp
// within tolerance of now (replays of old messages fail), and one of the
// signatures of its webhook-signature header made with key over its id,
// timestamp and body, compared in constant time. Deduplicate by
// webhook-id besides: a message may arrive more than once.
func Verify(key []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	}
	secs, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return errors.New("webhook: webhook-timestamp is not Unix seconds")
	}
	if d := now.Sub(time.Unix(secs, 0)); math.Abs(float64(d)) > float64(tolerance) {
		return fmt.Errorf("webhook: the timestamp is %v from now, more than %v", d.Round(time.Second), tolerance)
	}
	want := Sign(key, id, time.Unix(secs, 0), body)
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhook: no valid signature")
}

// envelope is a Standard Webhooks payload: the event's type, its time and
// its data.
type envelope struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

// Event returns the JSON body of an event in the Standard Webhooks shape:
// {"type": typ, "timestamp": at (RFC 3339, UTC), "data": data}.
func Event(typ string, at time.Time, data any) ([]byte, error) {
	return json.Marshal(envelope{Type: typ, Timestamp: at.UTC().Format(time.RFC3339Nano), Data: data})
}
