package luosho_test

// R77 against a real daemon: a tool call's Attempt, and WithReconcile's functions
// answering tool.reconcile (Done: the tool does not run again; NotStarted and Unknown: it
// runs with Attempt 2 and Reconciled saying why), after the client left and after the
// daemon was killed (-9) and restarted.

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

func payAgent(reconcile bool) *luosho.Agent {
	return scripted("pay", []luosho.Tool{{Name: "pay", Reconcile: reconcile}},
		`{"tool_calls": [{"name": "pay", "arguments": {"amount": 5}}]}`, `{"text": "paid"}`)
}

// leaveAtTheToolCall executes until pay is handed out, then leaves (the client's context
// is cancelled while its tool runs): the call has attempt 1 and no result. kill, when not
// nil, kills the daemon before the client leaves.
func leaveAtTheToolCall(t *testing.T, target, sid string, agent *luosho.Agent, kill func(), opts ...luosho.RunOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxT(t))
	started := make(chan luosho.ToolCall, 1)
	pay := func(ctx context.Context, _ json.RawMessage) (any, error) {
		call, _ := luosho.CallFromContext(ctx)
		started <- call
		<-ctx.Done()
		return nil, ctx.Err()
	}
	done := make(chan error, 1)
	c := dial(t, target)
	go func() {
		_, err := c.Execute(ctx, sid, agent, "pay 5", luosho.Tools{"pay": pay}, append(opts, luosho.WithRetry(luosho.NoRetry))...)
		done <- err
	}()
	select {
	case call := <-started:
		if call.Attempt != 1 || call.Reconciled != pb.ReconcileOutcome_RECONCILE_OUTCOME_UNSPECIFIED || call.MayHaveRun() {
			t.Fatalf("first hand-out: %+v", call)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call was never handed out")
	}
	if kill != nil {
		kill()
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the run finished though the client left")
	}
}

// resumeWhenFree resumes sid until the run that the client left has let go of it.
func resumeWhenFree(t *testing.T, c *luosho.Client, sid string, tools luosho.Tools, opts ...luosho.RunOption) *luosho.Result {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := c.Resume(ctxT(t), sid, tools, opts...)
		if errors.Is(err, luosho.ErrSessionBusy) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}

func attemptsOf(t *testing.T, c *luosho.Client, sid string) []int32 {
	t.Helper()
	cp, err := c.GetSession(ctxT(t), sid)
	if err != nil {
		t.Fatal(err)
	}
	var out []int32
	for _, r := range cp.GetToolCalls() {
		out = append(out, r.GetAttempts())
	}
	return out
}

func TestR77DoneAfterAKill9RecordsTheResultWithoutRunningTheTool(t *testing.T) {
	d := startRestartable(t, "go-r77")
	kill := func() {
		if err := d.restart(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(ctx context.Context, call luosho.ToolCall, args json.RawMessage) (luosho.Reconciled, error) {
		var a struct{ Amount int }
		if err := json.Unmarshal(args, &a); err != nil || a.Amount != 5 || call.Attempt != 1 || call.ID != "call_0_0" {
			t.Errorf("reconcile asked with %+v %s", call, args)
		}
		return luosho.Done(map[string]string{"payment": call.ID}), nil
	}
	opts := []luosho.RunOption{luosho.WithReconcile(luosho.Reconcilers{"pay": check})}
	leaveAtTheToolCall(t, d.target, "go-done", payAgent(false), kill, opts...)
	c := dial(t, d.target)
	ran := 0
	res := resumeWhenFree(t, c, "go-done", luosho.Tools{"pay": func(context.Context, json.RawMessage) (any, error) {
		ran++
		return "paid again", nil
	}}, opts...)
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || ran != 0 {
		t.Fatalf("finish %v, the tool ran %d times after the reconcile", res.FinishReason, ran)
	}
	types := map[string]int{}
	for _, e := range res.Events {
		types[e.GetType()]++
	}
	if types["tool.reconcile"] != 1 || types["tool.call"] != 0 {
		t.Fatalf("events: %v", types)
	}
	if got := attemptsOf(t, c, "go-done"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("attempts %v", got)
	}
}

func TestR77NotStartedAndUnknownRunTheToolWithAttempt2(t *testing.T) {
	target := startDaemon(t)
	for _, tc := range []struct {
		sid    string
		opts   []luosho.RunOption
		reason pb.ReconcileOutcome
	}{
		{"go-not-started", []luosho.RunOption{luosho.WithReconcile(luosho.Reconcilers{
			"pay": func(context.Context, luosho.ToolCall, json.RawMessage) (luosho.Reconciled, error) {
				return luosho.NotStarted, nil
			}})}, pb.ReconcileOutcome_RECONCILE_OUTCOME_NOT_STARTED},
		{"go-error", []luosho.RunOption{luosho.WithReconcile(luosho.Reconcilers{
			"pay": func(context.Context, luosho.ToolCall, json.RawMessage) (luosho.Reconciled, error) {
				return luosho.Reconciled{}, errors.New("the provider is down")
			}})}, pb.ReconcileOutcome_RECONCILE_OUTCOME_UNKNOWN},
		// The flag set on the tool, no function given: answered Unknown at once.
		{"go-no-function", nil, pb.ReconcileOutcome_RECONCILE_OUTCOME_UNKNOWN},
	} {
		t.Run(tc.sid, func(t *testing.T) {
			leaveAtTheToolCall(t, target, tc.sid, payAgent(true), nil, tc.opts...)
			c := dial(t, target)
			var seen []luosho.ToolCall
			began := time.Now()
			res := resumeWhenFree(t, c, tc.sid, luosho.Tools{"pay": func(ctx context.Context, _ json.RawMessage) (any, error) {
				call, _ := luosho.CallFromContext(ctx)
				seen = append(seen, call)
				return "paid", nil
			}}, tc.opts...)
			if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || len(seen) != 1 {
				t.Fatalf("finish %v, hand-outs %+v", res.FinishReason, seen)
			}
			if seen[0].Attempt != 2 || seen[0].Reconciled != tc.reason ||
				seen[0].MayHaveRun() != (tc.reason == pb.ReconcileOutcome_RECONCILE_OUTCOME_UNKNOWN) {
				t.Fatalf("second hand-out: %+v", seen[0])
			}
			if time.Since(began) > 20*time.Second {
				t.Fatal("the reconcile waited for the tool timeout")
			}
			if got := attemptsOf(t, c, tc.sid); len(got) != 1 || got[0] != 2 {
				t.Fatalf("attempts %v", got)
			}
		})
	}
}
