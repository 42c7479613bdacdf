package luosho_test

// Retries counted by progress, retry_after_s honoured, PROVIDER_REJECTED typed and never
// retried: against the in-memory fake daemon of retry_test.go (an in-process gRPC server),
// since a real daemon cannot fail on cue after exactly the events a test wants.

import (
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failure is a status error with an ErrorInfo of the daemon's domain.
func failure(t *testing.T, code codes.Code, reason string, md map[string]string) error {
	t.Helper()
	st, err := status.New(code, reason+" from the fake").WithDetails(&errdetails.ErrorInfo{
		Domain: luosho.ErrorDomain, Reason: reason, Metadata: md,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// Every attempt resumes the run and brings new events (run.start, step.start, with seqs
// never seen), then fails UNAVAILABLE/PROVIDER_ERROR with retry_after_s: no attempt makes
// progress, so the run stops after MaxAttempts attempts with the last error, and each
// retry waited at least retry_after_s (the policy's own backoff being far shorter).
func TestAttemptsWithoutProgressAreBoundedAndWaitRetryAfter(t *testing.T) {
	const retryAfter = 250 * time.Millisecond
	var mu sync.Mutex
	var opened []time.Time
	f := &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
		mu.Lock()
		opened = append(opened, time.Now())
		mu.Unlock()
		base := uint64(attempt-1) * 2
		send(ev(base+1, "run.start"))
		send(ev(base+2, "step.start"))
		return failure(t, codes.Unavailable, "PROVIDER_ERROR", map[string]string{
			"provider": "llm", "model": "test-model", "status": "503", "error_type": "overloaded_error",
			"provider_message": "Overloaded", "transient": "true", "retry_after_s": "0.25",
			"attempt": strconv.Itoa(attempt),
		})
	}}
	c := serveFake(t, f) // MaxAttempts 4, backoff 1ms to 5ms
	var seqs []uint64
	res, err := c.Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil,
		luosho.OnEvent(func(e *luosho.Event) { seqs = append(seqs, e.GetSeq()) }))
	var e *luosho.Error
	if !errors.As(err, &e) || !errors.Is(err, luosho.ErrProvider) || !errors.Is(err, luosho.ErrUnavailable) ||
		errors.Is(err, luosho.ErrProviderRejected) {
		t.Fatalf("err %v (%T), want the last PROVIDER_ERROR", err, err)
	}
	if e.Metadata["attempt"] != "4" {
		t.Fatalf("the error of attempt %q returned, want the last one's (4)", e.Metadata["attempt"])
	}
	if after, ok := e.RetryAfter(); !ok || after != retryAfter {
		t.Fatalf("RetryAfter() = %v, %v", after, ok)
	}
	if res.Attempts != 4 || len(f.requests) != 4 {
		t.Fatalf("%d attempts, %d requests; want 4 (MaxAttempts: none made progress)", res.Attempts, len(f.requests))
	}
	if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("delivered seqs %v: every new event is still delivered", seqs)
	}
	for i := 1; i < len(opened); i++ {
		if gap := opened[i].Sub(opened[i-1]); gap < retryAfter {
			t.Fatalf("attempt %d opened %v after the previous one failed, before its retry_after_s (%v)", i+1, gap, retryAfter)
		}
	}
}

// The count restarts only when an attempt delivers, for the first time, a model.turn or a
// tool.result (the lead's or a sub-agent's): not a replayed one, not one delivered
// before, not run.start or step.start.
func TestOnlyProgressStartsTheCountAgain(t *testing.T) {
	subResult := ev(0, "tool.result")
	subResult.Subagent = &pb.SubAgentTag{Name: "helper", Depth: 1, Path: []string{"helper"}, TaskId: "task_1"}
	f := &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
		switch attempt {
		case 1: // progress: a model turn
			send(ev(1, "run.start"))
			send(ev(2, "step.start"))
			send(ev(3, "model.turn"))
		case 2: // none: the model turn again (already delivered), new run.start and step.start
			send(ev(3, "model.turn"))
			send(ev(4, "run.start"))
			send(ev(5, "step.start"))
		case 3: // none: a replayed model turn, even above the highest seq seen
			send(replay(ev(6, "model.turn")))
			send(ev(7, "text.delta"))
			send(ev(8, "tool.call"))
		case 4: // progress: a sub-agent's tool result
			subResult.Seq = 9
			send(subResult)
		case 5, 6: // none
			send(ev(uint64(5+attempt), "step.start"))
		}
		return status.Error(codes.Unavailable, "down")
	}}
	c := serveFake(t, f).WithRetry(luosho.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	res, err := c.Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
	// 1 moves; 2, 3 do not; 4 moves; 5, 6, 7 do not: the third in a row is the last.
	if !errors.Is(err, luosho.ErrUnavailable) || res.Attempts != 7 || len(f.requests) != 7 {
		t.Fatalf("err %v, %d attempts, %d requests; want UNAVAILABLE after 7", err, res.Attempts, len(f.requests))
	}
	if n := len(res.Events); n != 11 {
		t.Fatalf("%d events delivered, want 11 (the model turn once)", n)
	}
}

// PROVIDER_REJECTED (FAILED_PRECONDITION) is a typed error that is also a provider error,
// with the provider's details in its metadata, and no attempt follows it.
func TestProviderRejectedIsTypedAndFinal(t *testing.T) {
	md := map[string]string{
		"provider": "llm", "model": "test-model", "status": "400", "error_type": "invalid_request_error",
		"provider_message": "messages.1.content.0.type: Expected `thinking`", "attempts": "1",
		"transient": "false", "session_id": "s-1",
	}
	f := &fakeDaemon{play: func(_ int, send func(*pb.Event)) error {
		send(ev(1, "run.start"))
		send(ev(2, "step.start"))
		return failure(t, codes.FailedPrecondition, "PROVIDER_REJECTED", md)
	}}
	res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
	var e *luosho.Error
	if !errors.Is(err, luosho.ErrProviderRejected) || !errors.Is(err, luosho.ErrProvider) || !errors.As(err, &e) {
		t.Fatalf("err %v (%T), want a PROVIDER_REJECTED *luosho.Error", err, err)
	}
	if errors.Is(err, luosho.ErrUnavailable) || errors.Is(err, luosho.ErrSessionBusy) || e.Code != codes.FailedPrecondition {
		t.Fatalf("err %v matches too much (code %v)", err, e.Code)
	}
	if e.ProviderStatus() != "400" || e.ProviderMessage() != md["provider_message"] || e.SessionID() != "s-1" ||
		e.Metadata["error_type"] != "invalid_request_error" || e.Reason != "PROVIDER_REJECTED" {
		t.Fatalf("error %v, metadata %v", e, e.Metadata)
	}
	if res.Attempts != 1 || len(f.requests) != 1 {
		t.Fatalf("%d attempts, %d requests: PROVIDER_REJECTED retried", res.Attempts, len(f.requests))
	}
	if !errors.Is(luosho.ErrProviderRejected, luosho.ErrProvider) || errors.Is(luosho.ErrProvider, luosho.ErrProviderRejected) {
		t.Fatal("ErrProviderRejected must be an ErrProvider, not the other way round")
	}
	transient := &luosho.Error{Code: codes.Unavailable, Reason: "PROVIDER_ERROR"}
	if !errors.Is(transient, luosho.ErrProvider) || errors.Is(transient, luosho.ErrProviderRejected) {
		t.Fatal("PROVIDER_ERROR must match ErrProvider only")
	}
	// Never retried, whatever code it came with.
	odd := &luosho.Error{Code: codes.Unavailable, Reason: "PROVIDER_REJECTED"}
	if luosho.DefaultRetryPolicy().ShouldRetry(odd, 1, 0) {
		t.Fatal("ShouldRetry(PROVIDER_REJECTED) = true")
	}
}

func TestDelayIsTheLongerOfBackoffAndRetryAfter(t *testing.T) {
	p := luosho.RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 2, Jitter: -1}
	with := func(v string) error {
		return &luosho.Error{Code: codes.Unavailable, Reason: "PROVIDER_ERROR", Metadata: map[string]string{"retry_after_s": v}}
	}
	cases := []struct {
		name    string
		attempt int
		err     error
		want    time.Duration
	}{
		{"no retry_after_s", 1, &luosho.Error{Code: codes.Unavailable}, 100 * time.Millisecond},
		{"not an *Error", 2, errors.New("x"), 200 * time.Millisecond},
		{"retry_after_s longer", 1, with("0.75"), 750 * time.Millisecond},
		{"retry_after_s in whole seconds", 3, with("2"), 2 * time.Second},
		{"retry_after_s shorter", 3, with("0.01"), 400 * time.Millisecond},
		{"retry_after_s beyond MaxBackoff", 9, with("5"), 5 * time.Second},
		{"retry_after_s not a number", 1, with("soon"), 100 * time.Millisecond},
		{"retry_after_s negative", 1, with("-3"), 100 * time.Millisecond},
	}
	for _, c := range cases {
		if got := p.Delay(c.attempt, c.err); got != c.want {
			t.Errorf("%s: Delay(%d) = %v, want %v", c.name, c.attempt, got, c.want)
		}
	}
	jittered := luosho.RetryPolicy{} // 100ms ±20%: retry_after_s is a floor under it
	for range 100 {
		if d := jittered.Delay(1, with("0.1")); d < 100*time.Millisecond || d > 120*time.Millisecond {
			t.Fatalf("Delay = %v, want within [100ms, 120ms]", d)
		}
	}
}
