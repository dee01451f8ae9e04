package adaptertest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// hi is the input of scripted cases.
func hi() []*schema.Message { return []*schema.Message{schema.UserMessage("hi")} }

// TurnCase is a scripted turn and the message it must give.
type TurnCase struct {
	Name string
	Turn fakemodel.Turn
	Want Want
	// Check, when set, checks what Want does not cover (provider data).
	Check func(t testing.TB, msg *schema.Message)
	// Normalize, when set, clears what may differ between two runs (made-up
	// ids) before Generate's and Stream's messages are compared.
	Normalize func(msg *schema.Message)
}

// CheckTurns plays each case through srv, with Generate and with Stream,
// checks both messages and that they are the same.
func CheckTurns(t *testing.T, srv *fakemodel.Server, m model.BaseChatModel, cases []TurnCase) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var got [2]*schema.Message
			for i, stream := range []bool{false, true} {
				srv.Push(tc.Turn)
				got[i] = Run(t, m, stream, hi())
				Check(t, got[i], tc.Want)
				if tc.Check != nil {
					tc.Check(t, got[i])
				}
				if tc.Normalize != nil {
					tc.Normalize(got[i])
				}
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				t.Errorf("Generate and Stream differ:\n%+v\n%+v", got[0], got[1])
			}
		})
	}
}

// ErrorCase is a scripted failure and the error it must give.
type ErrorCase struct {
	Name string
	Turn fakemodel.Turn
	// OnlyStream runs the case streaming only.
	OnlyStream bool
	Kind       provider.Kind
	Code       string
	Retryable  bool
	RetryAfter time.Duration
	// Message, when set, is the error's message.
	Message string
}

// CheckErrors plays each case through srv, streaming and not, and checks
// the *provider.Error.
func CheckErrors(t *testing.T, srv *fakemodel.Server, m model.BaseChatModel, cases []ErrorCase) {
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			if tc.OnlyStream && !stream {
				continue
			}
			t.Run(fmt.Sprintf("%s stream=%v", tc.Name, stream), func(t *testing.T) {
				srv.Push(tc.Turn)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				pe := ErrorKind(t, RunErr(ctx, m, stream, hi()), tc.Kind)
				if pe.Code != tc.Code || pe.Retryable != tc.Retryable || pe.RetryAfter != tc.RetryAfter {
					t.Errorf("error = %+v", pe)
				}
				if tc.Message != "" && pe.Message != tc.Message {
					t.Errorf("message %q\nwant    %q", pe.Message, tc.Message)
				}
			})
		}
	}
}

// CheckCancellation checks that a stalled stream and delayed headers end
// with the caller's context: a request timeout is a timeout, a cancel an
// abort.
func CheckCancellation(t *testing.T, srv *fakemodel.Server, m model.BaseChatModel) {
	cases := []struct {
		name   string
		turn   fakemodel.Turn
		stream bool
		cause  error
		kind   provider.Kind
	}{
		{"stalled stream, request timeout", fakemodel.Turn{Text: "partial", StallAfter: 1}, true, provider.ErrRequestTimeout, provider.KindTimeout},
		{"stalled stream, cancelled", fakemodel.Turn{Text: "partial", StallAfter: 1}, true, context.Canceled, provider.KindAborted},
		{"stalled body, cancelled", fakemodel.Turn{Text: "partial", StallAfter: 1}, false, context.Canceled, provider.KindAborted},
		{"delayed headers, request timeout", fakemodel.Turn{Text: "late", Delay: time.Minute}, false, provider.ErrRequestTimeout, provider.KindTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv.Push(tc.turn)
			ctx, cancel := context.WithCancelCause(context.Background())
			timer := time.AfterFunc(100*time.Millisecond, func() { cancel(tc.cause) })
			defer timer.Stop()
			err := RunErr(ctx, m, tc.stream, hi())
			cancel(nil)
			pe := ErrorKind(t, err, tc.kind)
			if tc.kind == provider.KindTimeout && !pe.Retryable {
				t.Errorf("a request timeout is not retryable: %+v", pe)
			}
		})
	}
}
