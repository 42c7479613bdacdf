package luosho_test

// The retry decisions of R75, and the retry loop against a fake daemon (bufconn) for what a
// real one cannot do on cue: a stream that breaks exactly after given events, a replay with
// a tool.call that must not be answered, a failure that must not be retried.

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
)

func TestShouldRetry(t *testing.T) {
	p := luosho.RetryPolicy{MaxAttempts: 3}
	unavailable := &luosho.Error{Code: codes.Unavailable}
	transport := &luosho.Error{Code: codes.Internal}
	unknown := &luosho.Error{Code: codes.Unknown}
	cases := []struct {
		name   string
		policy luosho.RetryPolicy
		err    error
		n, got int
		want   bool
	}{
		{"UNAVAILABLE before any event", p, unavailable, 1, 0, true},
		{"UNAVAILABLE after events", p, unavailable, 2, 5, true},
		{"SHUTTING_DOWN (UNAVAILABLE with a reason)", p, &luosho.Error{Code: codes.Unavailable, Reason: "SHUTTING_DOWN"}, 1, 3, true},
		{"the attempts in a row used up", p, unavailable, 3, 0, false},
		{"NoRetry", luosho.NoRetry, unavailable, 1, 0, false},
		{"INTERNAL without a reason before any event", p, transport, 1, 0, true},
		{"UNKNOWN without a reason before any event", p, unknown, 1, 0, true},
		{"INTERNAL after an event: the request arrived", p, transport, 1, 1, false},
		{"INTERNAL with a reason: the daemon's answer", p, &luosho.Error{Code: codes.Internal, Reason: "STORE_FULL"}, 1, 0, false},
		{"INVALID_ARGUMENT", p, &luosho.Error{Code: codes.InvalidArgument, Reason: "REQUEST_ID_REUSED"}, 1, 0, false},
		{"SESSION_BUSY", p, &luosho.Error{Code: codes.FailedPrecondition, Reason: "SESSION_BUSY"}, 1, 0, false},
		{"the caller's context", p, context.Canceled, 1, 0, false},
		{"a deadline", p, context.DeadlineExceeded, 1, 0, false},
		{"not an *Error", p, errors.New("boom"), 1, 0, false},
		{"the zero policy is the default (20 attempts)", luosho.RetryPolicy{}, unavailable, 19, 0, true},
		{"the zero policy's last attempt", luosho.RetryPolicy{}, unavailable, 20, 0, false},
		{"PROVIDER_REJECTED", p, &luosho.Error{Code: codes.FailedPrecondition, Reason: "PROVIDER_REJECTED"}, 1, 0, false},
		{"PROVIDER_ERROR (transient)", p, &luosho.Error{Code: codes.Unavailable, Reason: "PROVIDER_ERROR"}, 2, 3, true},
	}
	for _, c := range cases {
		if got := c.policy.ShouldRetry(c.err, c.n, c.got); got != c.want {
			t.Errorf("%s: ShouldRetry = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestBackoffGrowsCappedAndJittered(t *testing.T) {
	exact := luosho.RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 2, Jitter: -1}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := exact.Backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	def := luosho.RetryPolicy{} // 100ms ±20%
	var seen []time.Duration
	for range 200 {
		d := def.Backoff(1)
		if d < 80*time.Millisecond || d > 120*time.Millisecond {
			t.Fatalf("default Backoff(1) = %v, outside 100ms ±20%%", d)
		}
		seen = append(seen, d)
	}
	slices.Sort(seen)
	if seen[len(seen)-1]-seen[0] < 10*time.Millisecond {
		t.Fatalf("no jitter: 200 backoffs within %v", seen[len(seen)-1]-seen[0])
	}
	if got := def.Backoff(100); got > 2400*time.Millisecond {
		t.Fatalf("default Backoff(100) = %v, above 2s +20%%", got)
	}
}

var uuid7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewRequestIDIsAUUIDv7(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for range 50 {
		id := luosho.NewRequestID()
		if !uuid7.MatchString(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
		time.Sleep(2 * time.Millisecond) // a new millisecond: the ids sort by time
		if id <= prev {
			t.Fatalf("%q made after %q sorts before it", id, prev)
		}
		prev = id
	}
	ms := time.Now().UnixMilli()
	id := luosho.NewRequestID()
	var stamp int64
	for _, h := range id[:8] + id[9:13] {
		stamp = stamp<<4 | int64(hexVal(h))
	}
	if stamp < ms || stamp > ms+1000 {
		t.Fatalf("%q carries the time %d, made at %d", id, stamp, ms)
	}
}

func hexVal(r rune) int {
	if r >= 'a' {
		return int(r-'a') + 10
	}
	return int(r - '0')
}

// fakeDaemon plays a scripted stream per attempt and records what the client sent.
type fakeDaemon struct {
	pb.UnimplementedAgentServiceServer
	play func(attempt int, send func(*pb.Event)) error

	mu        sync.Mutex
	requests  []*pb.ExecuteRequest
	resolves  []*pb.ResolveRequest
	submitted []*pb.SubmitToolResultRequest
	onSubmit  chan string
}

func (f *fakeDaemon) Execute(req *pb.ExecuteRequest, s grpc.ServerStreamingServer[pb.ExecuteResponse]) error {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	n := len(f.requests)
	f.mu.Unlock()
	return f.play(n, func(ev *pb.Event) { _ = s.Send(&pb.ExecuteResponse{Event: ev}) })
}

func (f *fakeDaemon) Resolve(req *pb.ResolveRequest, s grpc.ServerStreamingServer[pb.ResolveResponse]) error {
	f.mu.Lock()
	f.resolves = append(f.resolves, req)
	n := len(f.resolves)
	f.mu.Unlock()
	return f.play(n, func(ev *pb.Event) { _ = s.Send(&pb.ResolveResponse{Event: ev}) })
}

func (f *fakeDaemon) SubmitToolResult(_ context.Context, req *pb.SubmitToolResultRequest) (*pb.SubmitToolResultResponse, error) {
	f.mu.Lock()
	f.submitted = append(f.submitted, req)
	f.mu.Unlock()
	if f.onSubmit != nil {
		f.onSubmit <- req.GetToolCallId()
	}
	return &pb.SubmitToolResultResponse{Outcome: pb.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED}, nil
}

// serveFake serves f over an in-memory listener and returns a client of it.
func serveFake(t *testing.T, f *fakeDaemon) *luosho.Client {
	t.Helper()
	return serveAgentService(t, f)
}

// serveAgentService serves impl over an in-memory listener and returns a client of it
// (MaxAttempts 4, backoff 1ms to 5ms).
func serveAgentService(t *testing.T, impl pb.AgentServiceServer) *luosho.Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	pb.RegisterAgentServiceServer(srv, impl)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return luosho.New(conn).WithRetry(luosho.RetryPolicy{MaxAttempts: 4, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
}

func ev(seq uint64, typ string) *pb.Event {
	return &pb.Event{SessionId: "s-1", RunId: "r-1", Seq: seq, Type: typ}
}

func toolCall(seq uint64, id string, replayed bool) *pb.Event {
	e := ev(seq, "tool.call")
	e.Replayed = replayed
	e.Payload = &pb.Event_ToolCall{ToolCall: &pb.ToolCallRequested{Call: &pb.ToolCall{Id: id, Name: "add", ArgumentsJson: `{"a": 1, "b": 2}`}}}
	return e
}

func runDone(seq uint64, replayed bool) *pb.Event {
	e := ev(seq, "run.done")
	e.Replayed = replayed
	e.Payload = &pb.Event_RunDone{RunDone: &pb.RunDone{
		FinishReason: pb.FinishReason_FINISH_REASON_STOP, Status: pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED, FinalText: "done",
	}}
	return e
}

func replay(e *pb.Event) *pb.Event { e.Replayed = true; return e }

func countingAdd(n *atomic.Int32) luosho.ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		n.Add(1)
		return add(ctx, args)
	}
}

// The stream breaks after a tool's result; the retry replays the ended run: events already
// delivered are skipped, the replayed tool.call the client never saw is delivered but not
// answered, and the request id is the same on both attempts.
func TestRetryReplaysWithoutRedeliveringOrReanswering(t *testing.T) {
	f := &fakeDaemon{onSubmit: make(chan string, 4)}
	f.play = func(attempt int, send func(*pb.Event)) error {
		switch attempt {
		case 1:
			send(ev(1, "run.start"))
			send(toolCall(2, "c1", false))
			<-f.onSubmit
			send(ev(3, "tool.result"))
			return status.Error(codes.Unavailable, "the daemon went away")
		default:
			send(replay(ev(1, "run.start")))
			send(replay(toolCall(2, "c1", false)))
			send(replay(ev(3, "tool.result")))
			send(replay(toolCall(4, "c2", false)))
			send(replay(ev(5, "tool.result")))
			send(runDone(6, true))
			return nil
		}
	}
	c := serveFake(t, f)
	var runs atomic.Int32
	var seqs []uint64
	res, err := c.Execute(ctxT(t), "s-1", scripted("x", addTool), "hi", luosho.Tools{"add": countingAdd(&runs)},
		luosho.OnEvent(func(e *luosho.Event) { seqs = append(seqs, e.GetSeq()) }))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seqs, []uint64{1, 2, 3, 4, 5, 6}) || len(res.Events) != 6 {
		t.Fatalf("delivered seqs %v (%d events in the result)", seqs, len(res.Events))
	}
	if res.Attempts != 2 || res.FinalText != "done" || res.Status != pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED {
		t.Fatalf("result %+v", res)
	}
	if runs.Load() != 1 || len(f.submitted) != 1 || f.submitted[0].GetToolCallId() != "c1" {
		t.Fatalf("tool ran %d times, submissions %v", runs.Load(), f.submitted)
	}
	if len(f.requests) != 2 || f.requests[0].GetRequestId() == "" || f.requests[0].GetRequestId() != f.requests[1].GetRequestId() ||
		res.RequestID != f.requests[0].GetRequestId() || !uuid7.MatchString(res.RequestID) {
		t.Fatalf("request ids %q, %q; result's %q", f.requests[0].GetRequestId(), f.requests[1].GetRequestId(), res.RequestID)
	}
}

// A call handed out again by the resumed run gets the result the tool already computed:
// the tool runs once.
func TestACallAskedAgainGetsTheCachedResult(t *testing.T) {
	release := make(chan struct{})
	f := &fakeDaemon{onSubmit: make(chan string, 4)}
	f.play = func(attempt int, send func(*pb.Event)) error {
		switch attempt {
		case 1:
			send(ev(1, "run.start"))
			send(toolCall(2, "c1", false))
			return status.Error(codes.Unavailable, "gone before the result")
		default:
			send(ev(3, "run.start"))
			send(toolCall(4, "c1", false)) // the same call, asked again
			close(release)
			<-f.onSubmit
			<-f.onSubmit // both answers: the first attempt's and this one's
			send(runDone(5, false))
			return nil
		}
	}
	c := serveFake(t, f)
	var runs atomic.Int32
	tool := func(ctx context.Context, args json.RawMessage) (any, error) {
		<-release // still running when the call is asked again
		runs.Add(1)
		return add(ctx, args)
	}
	res, err := c.Execute(ctxT(t), "s-1", scripted("x", addTool), "hi", luosho.Tools{"add": tool}, luosho.WithRequestID("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || res.Attempts != 2 || len(res.Events) != 5 {
		t.Fatalf("tool ran %d times; %d attempts, %d events", runs.Load(), res.Attempts, len(res.Events))
	}
	for _, s := range f.submitted {
		if s.GetToolCallId() != "c1" || s.GetResultJson() != `{"sum":3}` {
			t.Fatalf("submission %v", s)
		}
	}
	if f.requests[0].GetRequestId() != "mine" || f.requests[1].GetRequestId() != "mine" {
		t.Fatalf("request ids %q, %q", f.requests[0].GetRequestId(), f.requests[1].GetRequestId())
	}
}

func TestWhatIsNotRetried(t *testing.T) {
	t.Run("a transport failure after the first event", func(t *testing.T) {
		f := &fakeDaemon{play: func(_ int, send func(*pb.Event)) error {
			send(ev(1, "run.start"))
			return status.Error(codes.Internal, "torn")
		}}
		res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		var e *luosho.Error
		if !errors.As(err, &e) || e.Code != codes.Internal || res.Attempts != 1 || len(f.requests) != 1 {
			t.Fatalf("err %v, %d attempts, %d requests", err, res.Attempts, len(f.requests))
		}
	})
	t.Run("a transport failure before it is retried", func(t *testing.T) {
		f := &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
			if attempt == 1 {
				return status.Error(codes.Internal, "torn")
			}
			send(runDone(1, false))
			return nil
		}}
		res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		if err != nil || res.Attempts != 2 {
			t.Fatalf("err %v, %d attempts", err, res.Attempts)
		}
	})
	t.Run("the daemon's answer", func(t *testing.T) {
		f := &fakeDaemon{play: func(int, func(*pb.Event)) error {
			return status.Error(codes.InvalidArgument, "reused")
		}}
		_, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		if !errors.Is(err, luosho.ErrInvalidArgument) || len(f.requests) != 1 {
			t.Fatalf("err %v after %d requests", err, len(f.requests))
		}
	})
	t.Run("attempts in a row without progress are bounded", func(t *testing.T) {
		f := &fakeDaemon{play: func(int, func(*pb.Event)) error { return status.Error(codes.Unavailable, "down") }}
		res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		if !errors.Is(err, luosho.ErrUnavailable) || res.Attempts != 4 || len(f.requests) != 4 {
			t.Fatalf("err %v, %d attempts, %d requests", err, res.Attempts, len(f.requests))
		}
	})
	t.Run("an attempt that makes progress starts the count again", func(t *testing.T) {
		f := &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
			if attempt == 7 {
				send(runDone(7, false))
				return nil
			}
			if attempt%3 == 0 {
				send(ev(uint64(attempt), "model.turn")) // every third attempt moves the run
			}
			return status.Error(codes.Unavailable, "down")
		}}
		res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		if err != nil || res.Attempts != 7 {
			t.Fatalf("err %v, %d attempts", err, res.Attempts)
		}
	})
	t.Run("NoRetry", func(t *testing.T) {
		f := &fakeDaemon{play: func(int, func(*pb.Event)) error { return status.Error(codes.Unavailable, "down") }}
		res, err := serveFake(t, f).Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil, luosho.WithRetry(luosho.NoRetry))
		if !errors.Is(err, luosho.ErrUnavailable) || res.Attempts != 1 || len(f.requests) != 1 {
			t.Fatalf("err %v, %d attempts, %d requests", err, res.Attempts, len(f.requests))
		}
	})
}

// A Resolve retry carries the session its first attempt's events named.
func TestResolveRetryCarriesTheSession(t *testing.T) {
	f := &fakeDaemon{play: func(attempt int, send func(*pb.Event)) error {
		if attempt == 1 {
			send(ev(7, "run.start"))
			return status.Error(codes.Unavailable, "down")
		}
		send(runDone(8, false))
		return nil
	}}
	res, err := serveFake(t, f).Resolve(ctxT(t), "ap-1", true, "", nil)
	if err != nil || res.SessionID != "s-1" || res.Attempts != 2 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if f.resolves[0].GetSessionId() != "" || f.resolves[1].GetSessionId() != "s-1" ||
		f.resolves[0].GetRequestId() != f.resolves[1].GetRequestId() {
		t.Fatalf("resolve requests %v, %v", f.resolves[0], f.resolves[1])
	}
}

// Execute reads on after run.done to the stream's end, which the daemon sends once the run
// has let go of the session: returning at run.done let the next Execute of the session find
// it busy (SESSION_BUSY).
func TestExecuteReturnsWhenTheStreamEnds(t *testing.T) {
	f := &fakeDaemon{play: func(_ int, send func(*pb.Event)) error {
		send(runDone(1, false))
		time.Sleep(300 * time.Millisecond) // the run still holds the session
		return nil
	}}
	c := serveFake(t, f)
	start := time.Now()
	res, err := c.Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
	if err != nil || res.FinalText != "done" {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("Execute returned %v after it began, before the stream ended", took)
	}
}

// The README's retry configurations (compiled, not run: it has no output to check).
func ExampleClient_WithRetry() {
	c, _ := luosho.Dial(addr) // the default: DefaultRetryPolicy()
	defer c.Close()
	c5 := c.WithRetry(luosho.RetryPolicy{MaxAttempts: 5, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second})
	once := c.WithRetry(luosho.NoRetry) // one attempt; failures returned
	agent := &luosho.Agent{Model: "scripted:demo"}
	res, err := c.Execute(context.Background(), "chat-1", agent, "hi", nil, luosho.WithRetry(luosho.NoRetry)) // per call
	_, _, _, _ = c5, once, res, err
}
