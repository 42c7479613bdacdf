package luosho_test

// A run the daemon's admission refused before it started (RESOURCE_EXHAUSTED /
// DAEMON_OVERLOADED with retry_after_s, or gRPC's grpc-retry-pushback-ms trailer) comes
// back after the wait it was told with the same request (R75), bounded by OverloadAttempts,
// OverloadMaxWait and the context's deadline. A real daemon with a tiny start budget
// refuses most of a burst; the trailer, which the daemon does not send, comes from the
// in-process fake of retry_test.go.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// burst starts n runs at once on c and returns each one's result and error.
func burst(t *testing.T, c *luosho.Client, prefix string, n int) ([]*luosho.Result, []error) {
	t.Helper()
	results, errs := make([]*luosho.Result, n), make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[k], errs[k] = c.Execute(ctxT(t), fmt.Sprintf("%s-%d", prefix, k), scripted("b", nil, `{"text": "done"}`), "go", nil)
		}()
	}
	wg.Wait()
	return results, errs
}

func TestR75ABurstTheDaemonRefusesComesBackAsToldAndEveryRunFinishes(t *testing.T) {
	// Room for four starts at once (4 ms of loop work each): the rest is refused.
	addr := startDaemon(t, "--max-loop-lag-ms", "16")
	const n = 24
	c := dial(t, addr)
	_, errs := burst(t, c.WithRetry(luosho.RetryPolicy{OverloadAttempts: 1}), "once", n)
	refused := 0
	for _, err := range errs {
		var e *luosho.Error
		if errors.As(err, &e) {
			if e.Code != codes.ResourceExhausted || e.Reason != "DAEMON_OVERLOADED" {
				t.Fatalf("err %v, want DAEMON_OVERLOADED", err)
			}
			if after, ok := e.RetryAfter(); !ok || after < time.Second {
				t.Fatalf("retry_after_s %v, %v", after, ok)
			}
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if refused < n/2 {
		t.Fatalf("%d of %d refused without overload retries: the daemon did not refuse the burst", refused, n)
	}
	time.Sleep(time.Second) // the start budget fills again

	started := time.Now()
	results, errs := burst(t, c, "paced", n) // the default policy
	retried := 0
	for k, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", k, err)
		}
		if results[k].FinalText != "done" {
			t.Fatalf("run %d: %q", k, results[k].FinalText)
		}
		if results[k].Attempts > 1 {
			retried++
		}
	}
	if retried < n/2 {
		t.Fatalf("%d of %d runs retried: the burst was not refused", retried, n)
	}
	if took := time.Since(started); took < time.Second {
		t.Fatalf("the burst took %v: a refused run did not wait its retry_after_s (>= 1 s)", took)
	}
}

// trailerDaemon is the fake daemon whose streams also end with trailer(attempt).
type trailerDaemon struct {
	*fakeDaemon
	trailer func(attempt int) metadata.MD
}

func (d trailerDaemon) Execute(req *pb.ExecuteRequest, s grpc.ServerStreamingServer[pb.ExecuteResponse]) error {
	d.mu.Lock()
	n := len(d.requests) + 1
	d.mu.Unlock()
	s.SetTrailer(d.trailer(n))
	return d.fakeDaemon.Execute(req, s)
}

// overloaded refuses the first attempt with DAEMON_OVERLOADED (retry_after_s 1) and the
// trailer pushback (none when ""), and runs the second to its end.
func overloaded(t *testing.T, pushback string, opened *[]time.Time) trailerDaemon {
	var mu sync.Mutex
	return trailerDaemon{
		fakeDaemon: &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
			mu.Lock()
			*opened = append(*opened, time.Now())
			mu.Unlock()
			if attempt == 1 {
				return failure(t, codes.ResourceExhausted, "DAEMON_OVERLOADED", map[string]string{"retry_after_s": "1"})
			}
			send(ev(1, "run.start"))
			send(runDone(2, false))
			return nil
		}},
		trailer: func(attempt int) metadata.MD {
			if attempt == 1 && pushback != "" {
				return metadata.Pairs("grpc-retry-pushback-ms", pushback)
			}
			return nil
		},
	}
}

func TestR75AnOverloadedRefusalIsSentAgainWithTheSameRequestAfterThePushback(t *testing.T) {
	var opened []time.Time
	d := overloaded(t, "300", &opened)
	res, err := serveAgentService(t, d).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
	if err != nil || res.FinalText != "done" || res.Attempts != 2 {
		t.Fatalf("res %+v, err %v", res, err)
	}
	if len(d.requests) != 2 || !proto.Equal(d.requests[0], d.requests[1]) || d.requests[0].GetRequestId() == "" {
		t.Fatalf("the retry sent another request: %v", d.requests)
	}
	// The trailer's 300 ms (up to 20% more), not retry_after_s's whole second.
	if gap := opened[1].Sub(opened[0]); gap < 300*time.Millisecond || gap > 900*time.Millisecond {
		t.Fatalf("came back after %v, not the 300 ms pushback", gap)
	}
}

func TestAnOverloadedRefusalIsTheRunsFailureWhenThePolicyDeadlineOrServerSaySo(t *testing.T) {
	cases := []struct {
		name     string
		pushback string
		policy   luosho.RetryPolicy
		timeout  time.Duration
	}{
		{"overload retries off", "", luosho.RetryPolicy{OverloadAttempts: 1}, time.Minute},
		{"NoRetry", "", luosho.NoRetry, time.Minute},
		{"past OverloadMaxWait", "", luosho.RetryPolicy{OverloadMaxWait: 500 * time.Millisecond}, time.Minute},
		{"past the context's deadline", "", luosho.RetryPolicy{}, 700 * time.Millisecond},
		{"a negative pushback", "-1", luosho.RetryPolicy{}, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opened []time.Time
			d := overloaded(t, c.pushback, &opened)
			ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
			defer cancel()
			started := time.Now()
			_, err := serveAgentService(t, d).WithRetry(c.policy).Execute(ctx, "s-1", scripted("x", nil), "hi", nil)
			var e *luosho.Error
			if !errors.As(err, &e) || e.Reason != "DAEMON_OVERLOADED" {
				t.Fatalf("err %v, want the refusal", err)
			}
			if len(opened) != 1 || time.Since(started) > 400*time.Millisecond {
				t.Fatalf("%d attempts in %v: the refusal should end the run at once", len(opened), time.Since(started))
			}
		})
	}
}

func TestOverloadWaitIsTheHintWithUpwardJitter(t *testing.T) {
	p := luosho.RetryPolicy{OverloadAttempts: 3, Jitter: 0.2}
	refusal := &luosho.Error{Code: codes.ResourceExhausted, Reason: "TOO_MANY_RUNS", Metadata: map[string]string{"retry_after_s": "2"}}
	if !luosho.RefusedByAdmission(refusal, 0) || luosho.RefusedByAdmission(refusal, 1) {
		t.Fatal("a refusal counts as one only before the attempt's first event")
	}
	for k := 1; k < 3; k++ {
		if d, ok := p.OverloadWait(refusal, k); !ok || d < 2*time.Second || d > 2400*time.Millisecond {
			t.Fatalf("refusal %d: wait %v, %v", k, d, ok)
		}
	}
	if _, ok := p.OverloadWait(refusal, 3); ok {
		t.Fatal("the third refusal of OverloadAttempts 3 is retried")
	}
}
