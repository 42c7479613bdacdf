package luosho_test

// A model call no retry can fix, end to end: a real daemon calling a fake Anthropic server
// (tests/support/fake_model_server.py) that refuses every continuation with HTTP 400.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	"google.golang.org/grpc/codes"
)

// fakeModel is a running fake_model_server.py: what its first stdout line says.
type fakeModel struct {
	BaseURL  string `json:"base_url"`
	StatsURL string `json:"stats_url"`
	Config   string `json:"config"`
	KeyEnv   string `json:"key_env"`
	Key      string `json:"key"`
	Model    string `json:"model"`
	Tool     string `json:"tool"`
}

// fakeStats is what the fake's stats_url answers.
type fakeStats struct {
	Requests int   `json:"requests"`
	Turns    []int `json:"turns"`
	Statuses []int `json:"statuses"`
}

// startFakeModel runs the fake model server (with the daemon's interpreter) for one test,
// with extra arguments ("--fast") after the scenario;
// closing its stdin stops it when the test ends.
func startFakeModel(t *testing.T, wire, scenario string, extra ...string) *fakeModel {
	t.Helper()
	python, err := daemonPython()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "tests", "support", "fake_model_server.py"))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{script, "--wire", wire, "--scenario", scenario, "--dir", t.TempDir(), "--max-seconds", "300"}, extra...)
	cmd := exec.Command(python, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // it stops when its stdin closes
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, out)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatal("the fake model server did not start within 60s")
	}
	var f fakeModel
	if err := json.Unmarshal([]byte(line), &f); err != nil || f.StatsURL == "" || f.Config == "" {
		t.Fatalf("the fake model server said %q: %v", line, err)
	}
	return &f
}

func (f *fakeModel) stats(t *testing.T) fakeStats {
	t.Helper()
	resp, err := http.Get(f.StatsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s fakeStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The first model call asks for the client tool lookup; the tool runs; the continuation
// is refused with 400. With the client's default retry policy the run fails with the
// typed PROVIDER_REJECTED error, naming the provider's status and message, after exactly
// one model call for the continuation: neither the daemon nor the client tries it again.
func TestProviderRejectedIsNotRetried(t *testing.T) {
	fake := startFakeModel(t, "anthropic", "refuse-continuation")
	dir := t.TempDir()
	addr, stop, err := launchEnv(dir, "127.0.0.1:0", []string{fake.KeyEnv + "=" + fake.Key}, "--config", fake.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			t.Logf("daemon log (last 4000 bytes):\n%s", tail(string(log), 4000))
		}
	})
	c := dial(t, addr) // the default retry policy
	agent := &luosho.Agent{
		Model:        fake.Model,
		Instructions: "You are a test.",
		Tools:        []luosho.Tool{{Name: fake.Tool, Description: "Looks things up.", InputSchema: `{"type":"object"}`}},
	}
	var runs atomic.Int32
	lookup := func(context.Context, json.RawMessage) (any, error) {
		runs.Add(1)
		return map[string]string{"answer": "42"}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var types []string
	res, err := c.Execute(ctx, "refused-1", agent, "Look it up.", luosho.Tools{fake.Tool: lookup},
		luosho.OnEvent(func(e *luosho.Event) { types = append(types, e.GetType()) }))
	stats := fake.stats(t)
	t.Logf("error: %v; events %v; model calls %+v", err, types, stats)

	var e *luosho.Error
	if !errors.Is(err, luosho.ErrProviderRejected) || !errors.As(err, &e) {
		t.Fatalf("Execute returned %v (%T), want a PROVIDER_REJECTED *luosho.Error", err, err)
	}
	if !errors.Is(err, luosho.ErrProvider) || errors.Is(err, luosho.ErrUnavailable) || e.Code != codes.FailedPrecondition {
		t.Fatalf("%v: code %v; matches ErrProvider %v, ErrUnavailable %v", err, e.Code,
			errors.Is(err, luosho.ErrProvider), errors.Is(err, luosho.ErrUnavailable))
	}
	if e.ProviderStatus() != "400" || e.Metadata["status"] != "400" || !strings.Contains(e.ProviderMessage(), "Expected") {
		t.Fatalf("metadata %v: want status 400 and the provider's message", e.Metadata)
	}
	t.Logf("metadata: %v", e.Metadata)
	if res.Attempts != 1 || runs.Load() != 1 {
		t.Fatalf("%d attempts, the tool ran %d times; want 1 and 1", res.Attempts, runs.Load())
	}
	if stats.Requests != 2 || !slices.Equal(stats.Turns, []int{0, 1}) {
		t.Fatalf("the fake model server got %d requests, turns %v; want 2 and [0 1]", stats.Requests, stats.Turns)
	}
	// Nothing calls the model again afterwards (no retry of the client's or the daemon's).
	time.Sleep(500 * time.Millisecond)
	if again := fake.stats(t); again.Requests != 2 {
		t.Fatalf("%d model calls half a second after the error, want still 2", again.Requests)
	}
}
