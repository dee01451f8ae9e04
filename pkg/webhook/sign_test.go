package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSignStandardVector signs the example of the Standard Webhooks
// specification and gets its published signature.
func TestSignStandardVector(t *testing.T) {
	key, err := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestParseSecret(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""},
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", ""},
		{"  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", ""},
		{"whsec_c2hvcnQ=", "has 5 bytes"},
		{"not base64 at all!", "not \"whsec_\" followed by base64"},
	} {
		_, err := ParseSecret(tc.in)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseSecret(%q) = %v, want an error with %q", tc.in, err, tc.err)
		}
	}
}

func TestVerify(t *testing.T) {
	key, _ := ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	other, _ := ParseSecret("whsec_" + strings.Repeat("QUJD", 8))
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"run.ended"}`)
	headers := func(k []byte, ts time.Time, sigs ...string) http.Header {
		h := http.Header{}
		h.Set(HeaderID, "msg_1")
		h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
		sig := Sign(k, "msg_1", ts, body)
		h.Set(HeaderSignature, strings.Join(append(sigs, sig), " "))
		return h
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		body []byte
		err  string
	}{
		{"valid", headers(key, now), body, ""},
		{"one of several signatures", headers(key, now, "v1,AAAA", "v2,BBBB"), body, ""},
		{"another key", headers(other, now), body, "no valid signature"},
		{"body changed", headers(key, now), []byte(`{"type":"run.endeD"}`), "no valid signature"},
		{"too old: a replay", headers(key, now.Add(-6*time.Minute)), body, "more than 5m0s"},
		{"too far ahead", headers(key, now.Add(6*time.Minute)), body, "more than 5m0s"},
		{"no headers", http.Header{}, body, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(key, tc.h, tc.body, now, DefaultTolerance)
			if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Verify = %v, want an error with %q", err, tc.err)
			}
		})
	}
}

func TestEvent(t *testing.T) {
	b, err := Event("run.ended", time.Date(2026, 12, 6, 13, 0, 0, 5e6, time.FixedZone("x", 3600)), map[string]string{"run_id": "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"run.ended","timestamp":"2026-12-06T12:00:00.005Z","data":{"run_id":"r1"}}`; string(b) != want {
		t.Fatalf("Event = %s, want %s", b, want)
	}
}
