package luosho_test

// R74 + R75 against a real daemon killed (-9) and restarted in place: `luoshod serve` on
// SQLite over a unix socket with a stable --lease-owner (the restarted daemon takes the
// killed one's leases back at once), as tests/processes/test_retry_soak.py does for Python.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// restartable is a daemon that can be killed and started again on the same socket and store.
type restartable struct {
	dir, target string
	args        []string
	mu          sync.Mutex
	stop        func()
}

func startRestartable(t *testing.T, owner string) *restartable {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "luosho-go-") // a socket path is short
	if err != nil {
		t.Fatal(err)
	}
	d := &restartable{dir: dir, target: "unix:" + filepath.Join(dir, "d.sock"), args: []string{"--lease-owner", owner}}
	if err := d.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.kill()
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "daemon.log")); err == nil {
				t.Logf("daemon log (tail):\n%s", tail(string(b), 3000))
			}
		}
		_ = os.RemoveAll(dir)
	})
	return d
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (d *restartable) start() error {
	_, stop, err := launchAt(d.dir, d.target, d.args...)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.stop = stop
	d.mu.Unlock()
	return nil
}

// kill kills the daemon with SIGKILL and waits for it to be gone.
func (d *restartable) kill() {
	d.mu.Lock()
	stop := d.stop
	d.stop = nil
	d.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (d *restartable) restart() error {
	d.kill()
	return d.start()
}

// checkTranscript checks that the session has the user inputs want, each once and in
// order, every tool call exactly one result, and that it finished.
func checkTranscript(ctx context.Context, c *luosho.Client, sid string, want []string, callsPerInput int) error {
	cp, err := c.GetSession(ctx, sid)
	if err != nil {
		return err
	}
	var users, calls []string
	results := map[string]int{}
	for _, m := range cp.GetMessages() {
		switch m.GetRole() {
		case pb.Role_ROLE_USER:
			users = append(users, m.GetContent())
		case pb.Role_ROLE_TOOL:
			results[m.GetToolCallId()]++
		}
		for _, tc := range m.GetToolCalls() {
			calls = append(calls, tc.GetId())
		}
	}
	if !slices.Equal(users, want) {
		return fmt.Errorf("%s: user inputs %q, want %q", sid, users, want)
	}
	if len(calls) != callsPerInput*len(want) || len(results) != len(calls) {
		return fmt.Errorf("%s: %d calls, %d with results, want %d", sid, len(calls), len(results), callsPerInput*len(want))
	}
	for _, id := range calls {
		if results[id] != 1 {
			return fmt.Errorf("%s: call %s has %d results", sid, id, results[id])
		}
	}
	if cp.GetStatus() != pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED {
		return fmt.Errorf("%s: status %v", sid, cp.GetStatus())
	}
	return nil
}

// The daemon is killed while the client runs the run's tool; Execute retries with the same
// request id, the restarted daemon resumes the run (R74), the call asked again gets the
// result already computed, and the input is applied once. Sent again after the run
// ended, the same request replays it; the same id with another input is refused.
func TestRetriedExecuteAfterKillAppliesTheInputOnce(t *testing.T) {
	d := startRestartable(t, "go-retry")
	c := dial(t, d.target)
	ctx := ctxT(t)
	var runs atomic.Int32
	var restartErr error
	tool := func(ctx context.Context, args json.RawMessage) (any, error) {
		if runs.Add(1) == 1 {
			restartErr = d.restart() // the daemon dies with this call outstanding
		}
		return add(ctx, args)
	}
	agent := scripted("kill", addTool, callAdd12, sayDone)
	res, err := c.Execute(ctx, "kill-1", agent, "add once", luosho.Tools{"add": tool})
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalText != "done" || res.Attempts < 2 || runs.Load() != 1 {
		t.Fatalf("final text %q after %d attempts; the tool ran %d times", res.FinalText, res.Attempts, runs.Load())
	}
	if err := checkTranscript(ctx, c, "kill-1", []string{"add once"}, 1); err != nil {
		t.Fatal(err)
	}

	// The same request again (a retry whose first attempts never saw run.done): replayed.
	again, err := c.Execute(ctx, "kill-1", agent, "add once", luosho.Tools{"add": tool}, luosho.WithRequestID(res.RequestID))
	if err != nil {
		t.Fatal(err)
	}
	if again.FinalText != "done" || again.Attempts != 1 || len(again.Events) == 0 || runs.Load() != 1 {
		t.Fatalf("replay: %+v; the tool ran %d times", again, runs.Load())
	}
	for _, e := range again.Events {
		if !e.GetReplayed() {
			t.Fatalf("replay: event %d %s is not marked replayed", e.GetSeq(), e.GetType())
		}
	}
	if err := checkTranscript(ctx, c, "kill-1", []string{"add once"}, 1); err != nil {
		t.Fatal(err)
	}

	_, err = c.Execute(ctx, "kill-1", agent, "something else", nil, luosho.WithRequestID(res.RequestID))
	var e *luosho.Error
	if !errors.Is(err, luosho.ErrRequestIDReused) || !errors.Is(err, luosho.ErrInvalidArgument) || !errors.As(err, &e) {
		t.Fatalf("the same id with another input: %v", err)
	}
}

// A bounded soak: 8 sessions send input after input with the default retries while the
// daemon is killed -9 and restarted at random at least 10 times. Every transcript has each
// input exactly once, in order, and every call exactly one result.
func TestSoakKillRestartWithDefaultRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak of some 20 seconds")
	}
	const (
		sessions  = 8
		kills     = 10
		maxInputs = 60
	)
	var turns []string
	for range maxInputs { // input k plays turns 3k..3k+2: two tool turns, then text
		turns = append(turns,
			`{"tool_calls": [{"name": "add", "arguments": {"a": 1}}, {"name": "add", "arguments": {"a": 2}}], "delay_ms": 40}`,
			`{"tool_calls": [{"name": "add", "arguments": {"a": 3}}], "delay_ms": 40}`,
			`{"text": "sum", "delay_ms": 40}`)
	}
	agent := scripted("soak", addTool, turns...)
	agent.ToolConcurrency = 2

	d := startRestartable(t, "go-soak")
	c := dial(t, d.target) // the default retries
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var killed atomic.Int32
	killerDone := make(chan error, 1)
	go func() { // kills exactly `kills` times, then leaves the daemon up
		rng := rand.New(rand.NewPCG(75, 21))
		for killed.Load() < kills {
			time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond) // up for a random while
			if err := d.restart(); err != nil {
				killerDone <- err
				return
			}
			killed.Add(1)
		}
		killerDone <- nil
	}()

	tool := func(ctx context.Context, args json.RawMessage) (any, error) {
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // tools of many sessions interleave
		var a struct{ A int }
		return a.A, json.Unmarshal(args, &a)
	}
	sent := make([]int, sessions)
	attempts := make([]int, sessions)
	errs := make(chan error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("go-soak-%d", i)
			for k := 0; k < 2 || (killed.Load() < kills && k < maxInputs); k++ {
				res, err := c.Execute(ctx, sid, agent, fmt.Sprintf("%s input %d", sid, k), luosho.Tools{"add": tool})
				if err != nil {
					errs <- fmt.Errorf("%s input %d: %w", sid, k, err)
					return
				}
				if res.FinalText != "sum" || res.Status != pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED {
					errs <- fmt.Errorf("%s input %d: %+v", sid, k, res)
					return
				}
				sent[i]++
				attempts[i] += res.Attempts
			}
		}()
	}
	wg.Wait()
	if err := <-killerDone; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	total, tries := 0, 0
	for i := range sessions {
		total += sent[i]
		tries += attempts[i]
	}
	t.Logf("%d kills, %d inputs over %d sessions, %d attempts", killed.Load(), total, sessions, tries)
	if tries <= total {
		t.Fatalf("%d attempts for %d inputs: the kills broke no stream", tries, total)
	}
	for i := range sessions {
		sid := fmt.Sprintf("go-soak-%d", i)
		var want []string
		for k := range sent[i] {
			want = append(want, fmt.Sprintf("%s input %d", sid, k))
		}
		if err := checkTranscript(ctx, c, sid, want, 3); err != nil {
			t.Error(err)
		}
	}
}

// The daemon is killed -9 again and again with short windows up (0.3-0.7 s) and each time
// stays away 0.5 s plus its start-up, while one session sends input after input with few
// attempts in a row allowed (5, 50 ms doubling): attempts that failed at once while the
// connection sat in TRANSIENT_FAILURE would use those up in under a second, long before
// the daemon is back. Each retry waits for the connection to be READY (at most MaxBackoff)
// before it opens its attempt, so the run outlasts every outage: each input is applied once.
func TestRetryWaitsForTheConnectionThroughRestarts(t *testing.T) {
	const kills = 4
	var turns []string
	for range 40 { // input k plays turns 3k..3k+2
		turns = append(turns,
			`{"tool_calls": [{"name": "add", "arguments": {"a": 1}}], "delay_ms": 30}`,
			`{"tool_calls": [{"name": "add", "arguments": {"a": 2}}], "delay_ms": 30}`,
			`{"text": "sum", "delay_ms": 30}`)
	}
	agent := scripted("ready", addTool, turns...)
	d := startRestartable(t, "go-ready")
	policy := luosho.RetryPolicy{MaxAttempts: 5, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 2 * time.Second}
	c := dial(t, d.target).WithRetry(policy)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()

	var killed atomic.Int32
	killerDone := make(chan error, 1)
	go func() {
		rng := rand.New(rand.NewPCG(75, 7))
		for killed.Load() < kills {
			time.Sleep(time.Duration(300+rng.IntN(400)) * time.Millisecond) // up for a short while
			d.kill()
			time.Sleep(500 * time.Millisecond) // away, then its start-up
			if err := d.start(); err != nil {
				killerDone <- err
				return
			}
			killed.Add(1) // counted once back: the inputs go on through every outage
		}
		killerDone <- nil
	}()
	tool := func(_ context.Context, args json.RawMessage) (any, error) {
		var a struct{ A int }
		return a.A, json.Unmarshal(args, &a)
	}
	sid := "go-ready-1"
	var want []string
	tries := 0
	for k := 0; k < 2 || (killed.Load() < kills && k < 40); k++ {
		input := fmt.Sprintf("input %d", k)
		res, err := c.Execute(ctx, sid, agent, input, luosho.Tools{"add": tool})
		if err != nil {
			t.Fatalf("%s after %d kills: %v", input, killed.Load(), err)
		}
		if res.FinalText != "sum" {
			t.Fatalf("%s: %+v", input, res)
		}
		want = append(want, input)
		tries += res.Attempts
	}
	if err := <-killerDone; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills, %d inputs, %d attempts", killed.Load(), len(want), tries)
	if tries <= len(want) {
		t.Fatalf("%d attempts for %d inputs: the kills broke no stream", tries, len(want))
	}
	if err := checkTranscript(ctx, c, sid, want, 2); err != nil {
		t.Fatal(err)
	}
}
