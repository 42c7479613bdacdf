package luosho_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// R68/R69 from Go: an input sent WithIfBusy(ENQUEUE) while the session waits on a tool is
// queued (Queue shows it), runs after the current run, and one removed with DequeueInput
// fails with INPUT_DEQUEUED.
func TestIfBusyEnqueueQueueAndDequeue(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	agent := scripted("busy", []luosho.Tool{{Name: "wait"}},
		`{"tool_calls": [{"name": "wait", "arguments": {}}]}`, `{"text": "first"}`, `{"text": "second"}`)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	wait := func(ctx context.Context, _ json.RawMessage) (any, error) {
		started <- struct{}{}
		<-release
		return "done", nil
	}
	type outcome struct {
		r   *luosho.Result
		err error
	}
	first := make(chan outcome, 1)
	go func() {
		r, err := c.Execute(ctx, "go-q", agent, "one", luosho.Tools{"wait": wait})
		first <- outcome{r, err}
	}()
	<-started
	second, third := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		r, err := c.Execute(ctx, "go-q", agent, "two", nil,
			luosho.WithIfBusy(pb.IfBusy_IF_BUSY_ENQUEUE), luosho.WithRequestID("two"))
		second <- outcome{r, err}
	}()
	waitQueued(t, c, "go-q", 1)
	go func() {
		r, err := c.Execute(ctx, "go-q", agent, "three", nil,
			luosho.WithIfBusy(pb.IfBusy_IF_BUSY_ENQUEUE), luosho.WithRequestID("three"))
		third <- outcome{r, err}
	}()
	queue := waitQueued(t, c, "go-q", 2)
	if queue[0].GetRequestId() != "two" || queue[1].GetRequestId() != "three" {
		t.Fatalf("queue order: %v", queue)
	}
	if removed, err := c.DequeueInput(ctx, "go-q", "three"); err != nil || !removed {
		t.Fatalf("DequeueInput: %v %v", removed, err)
	}
	if removed, _ := c.DequeueInput(ctx, "go-q", "three"); removed {
		t.Fatal("removed twice")
	}
	if o := <-third; !hasReason(o.err, "INPUT_DEQUEUED") {
		t.Fatalf("dequeued input: %v", o.err)
	}
	close(release)
	if o := <-first; o.err != nil || o.r.FinalText != "first" {
		t.Fatalf("first: %+v %v", o.r, o.err)
	}
	o := <-second
	if o.err != nil || o.r.FinalText != "second" || o.r.Events[0].GetType() != "input.queued" {
		t.Fatalf("second: %+v %v", o.r, o.err)
	}
	cp, err := c.GetSession(ctx, "go-q")
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_USER {
			users = append(users, m.GetContent())
		}
	}
	if len(users) != 2 || users[0] != "one" || users[1] != "two" {
		t.Fatalf("users: %v", users)
	}
}

func waitQueued(t *testing.T, c *luosho.Client, sid string, n int) []*pb.QueuedInput {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		q, err := c.Queue(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) == n {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue has %d inputs, want %d", len(q), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasReason(err error, reason string) bool {
	var e *luosho.Error
	return errors.As(err, &e) && e.Reason == reason
}
