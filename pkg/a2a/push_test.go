package a2a_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/servetest"
	agenta2a "github.com/agentcore/agentcore/pkg/a2a"
	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestPushNotification sends a task with a push notification
// configuration through the a2a-go client to a Handler on a whole
// agent-server, and gets the completed task at a receiver: signed by the
// webhook machinery, with the client's token. A URL outside the allowed
// hosts is refused at the send.
func TestPushNotification(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "done"} })
	target, stop := servetest.Start(t, []string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(), "-tool-limits", "off",
		"-model-base-url", model.URL, "-model", "m"}, nil)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	servetest.WaitServing(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := agentv1.NewAgentServiceClient(conn).CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: "pusher"}); err != nil {
		t.Fatal(err)
	}

	got := make(chan *http.Request, 4)
	bodies := make(chan []byte, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer recv.Close()
	key := []byte("0123456789abcdef0123456789abcdef")
	allow, err := webhook.ParseAllow([]string{recv.URL})
	if err != nil {
		t.Fatal(err)
	}
	sender, err := webhook.New(webhook.Options{Key: key, Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(context.Background())
	h, err := agenta2a.NewHandler(agenta2a.Options{Conn: conn, Push: agenta2a.WebhookPusher(sender), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	front := httptest.NewServer(h)
	defer front.Close()

	card, err := agentcard.NewResolver(nil).Resolve(ctx, front.URL+agenta2a.PathPrefix+"pusher")
	if err != nil {
		t.Fatal(err)
	}
	if !card.Capabilities.PushNotifications {
		t.Error("the card offers no push notifications")
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	send := func(url string) (a2a.SendMessageResult, error) {
		return client.SendMessage(ctx, &a2a.MessageSendParams{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hi"}),
			Config:  &a2a.MessageSendConfig{PushConfig: &a2a.PushConfig{URL: url, Token: "client-token"}},
		})
	}
	if _, err := send("http://127.0.0.2:1/elsewhere"); err == nil {
		t.Error("a push URL outside the allowed hosts was taken")
	}
	res, err := send(recv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	select {
	case r := <-got:
		body := <-bodies
		if err := webhook.Verify(key, r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		if r.Header.Get("X-A2A-Notification-Token") != "client-token" || r.URL.Path != "/hook" {
			t.Errorf("token %q, path %q", r.Header.Get("X-A2A-Notification-Token"), r.URL.Path)
		}
		var pushed a2a.Task
		if err := json.Unmarshal(body, &pushed); err != nil || pushed.ID != task.ID || pushed.Status.State != a2a.TaskStateCompleted ||
			len(pushed.Artifacts) == 0 {
			t.Errorf("pushed %s (%v), want task %s completed with its artifacts", body, err, task.ID)
		}
	case <-ctx.Done():
		t.Fatal("no push notification")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
