package luosho_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
)

// daemonPython is the interpreter that runs luoshod: $LUOSHOD_PYTHON, else the
// repository's .venv (what `make test` creates).
func daemonPython() (string, error) {
	if p := os.Getenv("LUOSHOD_PYTHON"); p != "" {
		return p, nil
	}
	p, err := filepath.Abs(filepath.Join("..", "..", ".venv", "bin", "python"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no luoshod to test against: run `make test` (or set LUOSHOD_PYTHON): %w", err)
	}
	return p, nil
}

// launch runs `luoshod serve` on a free port with a SQLite store in dir and returns its
// address (from the "luoshod listening on ADDR" line) and a function that kills it.
func launch(dir string, args ...string) (string, func(), error) {
	return launchAt(dir, "127.0.0.1:0", args...)
}

// launchAt is launch listening on listen ("unix:/path" for a daemon restarted in place);
// the daemon's log is appended to dir/daemon.log. Its stop kills it with SIGKILL.
func launchAt(dir, listen string, args ...string) (string, func(), error) {
	return launchEnv(dir, listen, nil, args...)
}

// launchEnv is launchAt with env ("NAME=value" entries) added to the daemon's environment.
func launchEnv(dir, listen string, env []string, args ...string) (string, func(), error) {
	python, err := daemonPython()
	if err != nil {
		return "", nil, err
	}
	db := filepath.Join(dir, "luoshod.db")
	args = append([]string{"-m", "luoshod", "serve", "--listen", listen, "--store", "sqlite:///" + db}, args...)
	cmd := exec.Command(python, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = logFile // its log; LUOSHO_DAEMON_LOG=1 shows it
	if os.Getenv("LUOSHO_DAEMON_LOG") != "" {
		cmd.Stderr = os.Stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), "luoshod listening on ")
		if !ok {
			stop()
			return "", nil, fmt.Errorf("daemon did not start: %q", line)
		}
		return addr, stop, nil
	case <-time.After(60 * time.Second):
		stop()
		return "", nil, fmt.Errorf("daemon did not start within 60s")
	}
}

// startDaemon starts a daemon for one test; it is killed when the test ends.
func startDaemon(t testing.TB, args ...string) string {
	t.Helper()
	addr, stop, err := launch(t.TempDir(), args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// startDaemonEnv is startDaemon with env ("NAME=value" entries) added to the daemon's
// environment (a provider's key, …).
func startDaemonEnv(t testing.TB, env []string, args ...string) string {
	t.Helper()
	addr, stop, err := launchEnv(t.TempDir(), "127.0.0.1:0", env, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

func dial(t testing.TB, addr string) *luosho.Client {
	t.Helper()
	c, err := luosho.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// scripted is an agent of the scripted provider playing turns (each a JSON object).
func scripted(name string, tools []luosho.Tool, turns ...string) *luosho.Agent {
	return &luosho.Agent{
		Model:         "scripted:" + name,
		Instructions:  "You are a test.",
		Tools:         tools,
		ModelSettings: `{"script": [` + strings.Join(turns, ",") + `]}`,
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func add(_ context.Context, args json.RawMessage) (any, error) {
	var a struct{ A, B int }
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	return map[string]int{"sum": a.A + a.B}, nil
}
