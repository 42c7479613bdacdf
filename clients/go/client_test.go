package luosho_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

var addTool = []luosho.Tool{{Name: "add", InputSchema: `{"type": "object"}`}}

const (
	callAdd12 = `{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}`
	callAdd34 = `{"tool_calls": [{"name": "add", "arguments": {"a": 3, "b": 4}}]}`
	sayDone   = `{"text": "done"}`
)

func TestMultiStepRunWithClientTool(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	var seen []string
	res, err := c.Execute(ctx, "multi-1", scripted("multi", addTool, callAdd12, callAdd34, sayDone),
		"add things", luosho.Tools{"add": add}, luosho.OnEvent(func(ev *luosho.Event) { seen = append(seen, ev.GetType()) }))
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.FinalText != "done" || res.StepIndex != 3 {
		t.Fatalf("unexpected result: %+v", res)
	}
	if got := strings.Count(strings.Join(seen, " "), "tool.call"); got != 2 {
		t.Fatalf("want 2 tool.call events, got %d: %v", got, seen)
	}
	cp, err := c.GetSession(ctx, "multi-1")
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_TOOL {
			results = append(results, m.GetContent())
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], `"sum":3`) || !strings.Contains(results[1], `"sum":7`) {
		t.Fatalf("tool results in the transcript: %v", results)
	}
	if cp.GetStatus() != pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED {
		t.Fatalf("status %v", cp.GetStatus())
	}
	n := 0
	for e, err := range c.History(ctx, "multi-1", false) {
		if err != nil {
			t.Fatal(err)
		}
		_ = e
		n++
	}
	if n < 3 {
		t.Fatalf("history has %d entries", n)
	}
	var watched []uint64
	for ev, err := range c.Watch(ctx, "multi-1", 0, false) {
		if err != nil {
			t.Fatal(err)
		}
		watched = append(watched, ev.GetSeq())
	}
	if len(watched) != len(seen) || watched[0] != 1 {
		t.Fatalf("watch replayed %v, the run saw %d events", watched, len(seen))
	}
	// Resume of a finished session ends at once, with no run and no error.
	none, err := c.Resume(ctx, "multi-1", nil)
	if err != nil || len(none.Events) != 0 {
		t.Fatalf("Resume of a finished session: %v %v", none, err)
	}
	fork, err := c.Fork(ctx, "multi-1", 1, "multi-1-fork", nil)
	if err != nil {
		t.Fatal(err)
	}
	if fork.GetSessionId() != "multi-1-fork" {
		t.Fatalf("fork: %v", fork)
	}
	again, err := c.Resume(ctx, "multi-1-fork", luosho.Tools{"add": add})
	if err != nil {
		t.Fatal(err)
	}
	if again.FinishReason != pb.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("resumed fork: %+v", again)
	}
}

func TestToolErrorsAndUnknownToolsBecomeErrorResults(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	tools := []luosho.Tool{{Name: "add"}, {Name: "missing"}}
	res, err := c.Execute(ctx, "errs-1", scripted("errs", tools,
		`{"tool_calls": [{"name": "add", "arguments": {"a": 1}}, {"name": "missing", "arguments": {}}]}`, sayDone),
		"go", luosho.Tools{"add": func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("boom") }})
	if err != nil || res.FinalText != "done" {
		t.Fatal(res, err)
	}
	cp, _ := c.GetSession(ctx, "errs-1")
	var errs []string
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_TOOL && m.GetIsError() {
			errs = append(errs, m.GetContent())
		}
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "boom") || !strings.Contains(errs[1], "no tool named") {
		t.Fatalf("error results: %v", errs)
	}
}

func TestApprovalPausedAndResolved(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	tools := []luosho.Tool{{Name: "charge", NeedsApproval: true}}
	agent := scripted("approve", tools, `{"tool_calls": [{"name": "charge", "arguments": {"cents": 500}}]}`, sayDone)
	charged := 0
	charge := luosho.Tools{"charge": func(_ context.Context, args json.RawMessage) (any, error) {
		charged++
		return "charged", nil
	}}
	paused, err := c.Execute(ctx, "appr-1", agent, "charge me", charge)
	if err != nil {
		t.Fatal(err)
	}
	if paused.FinishReason != pb.FinishReason_FINISH_REASON_AWAITING_APPROVAL || paused.ApprovalID == "" || charged != 0 {
		t.Fatalf("not paused: %+v (charged %d)", paused, charged)
	}
	var ids []string
	for a, err := range c.Approvals(ctx, "appr-1") {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.GetApprovalId())
	}
	if len(ids) != 1 || ids[0] != paused.ApprovalID {
		t.Fatalf("approvals %v, want %s", ids, paused.ApprovalID)
	}
	// The session refuses new input until the approval is decided.
	_, err = c.Execute(ctx, "appr-1", agent, "hello?", charge)
	var le *luosho.Error
	if !errors.Is(err, luosho.ErrSessionAwaitingApproval) || !errors.As(err, &le) || le.ApprovalID() != paused.ApprovalID {
		t.Fatalf("want SESSION_AWAITING_APPROVAL naming %s, got %v", paused.ApprovalID, err)
	}
	done, err := c.Resolve(ctx, paused.ApprovalID, true, "ok by Ana", charge)
	if err != nil {
		t.Fatal(err)
	}
	if done.FinishReason != pb.FinishReason_FINISH_REASON_STOP || done.FinalText != "done" || charged != 1 {
		t.Fatalf("resolved run: %+v (charged %d)", done, charged)
	}
	_, err = c.Resolve(ctx, paused.ApprovalID, true, "", charge)
	if !errors.Is(err, luosho.ErrApprovalNotFound) {
		t.Fatalf("second Resolve: want APPROVAL_NOT_FOUND, got %v", err)
	}
}

func TestSessionBusyIsTyped(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	agent := scripted("busy", addTool, callAdd12, sayDone)
	holding := make(chan struct{})
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := c.Execute(ctx, "busy-1", agent, "hold", luosho.Tools{"add": func(ctx context.Context, args json.RawMessage) (any, error) {
			close(holding)
			<-release
			return add(ctx, args)
		}})
		first <- err
	}()
	<-holding
	_, err := c.Execute(ctx, "busy-1", agent, "hold", luosho.Tools{"add": add})
	var le *luosho.Error
	if !errors.Is(err, luosho.ErrSessionBusy) || !errors.As(err, &le) || le.ErrorReason() != pb.ErrorReason_ERROR_REASON_SESSION_BUSY {
		t.Fatalf("want SESSION_BUSY, got %v", err)
	}
	if errors.Is(err, luosho.ErrCheckpointNotFound) {
		t.Fatal("SESSION_BUSY matched another sentinel")
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSession(ctx, "no-such-session")
	if !errors.Is(err, luosho.ErrCheckpointNotFound) {
		t.Fatalf("want CHECKPOINT_NOT_FOUND, got %v", err)
	}
	_, err = c.GetSession(ctx, "bad id!")
	if !errors.Is(err, luosho.ErrInvalidArgument) || !errors.As(err, &le) || le.Reason != "INVALID_SESSION_ID" {
		t.Fatalf("want INVALID_SESSION_ID, got %v", err)
	}
}

// The helper process of TestCrashAndResumeFromAFreshProcess: LUOSHO_HELPER says what to do.
func TestMain(m *testing.M) {
	switch os.Getenv("LUOSHO_HELPER") {
	case "":
		stop, err := startExampleDaemon()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		code := m.Run()
		stop()
		os.Exit(code)
	case "crash":
		os.Exit(helperCrash())
	case "resume":
		os.Exit(helperResume())
	}
}

var crashAgent = scripted("crash", addTool, callAdd12, callAdd34, sayDone)

// helperCrash runs the session until its second tool call, then cancels its context
// while holding that call: the client "crashes" with a call in flight.
func helperCrash() int {
	c, err := luosho.Dial(os.Getenv("LUOSHO_ADDR"))
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = c.Execute(ctx, "crash-1", crashAgent, "add twice", luosho.Tools{"add": func(ctx context.Context, args json.RawMessage) (any, error) {
		n++
		if n == 1 {
			return add(ctx, args)
		}
		call, _ := luosho.CallFromContext(ctx)
		fmt.Println("HOLDING", call.ID)
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	fmt.Println("CRASHED", errors.Is(err, context.Canceled))
	return 0
}

// helperResume finishes the session from a brand-new client process.
func helperResume() int {
	c, err := luosho.Dial(os.Getenv("LUOSHO_ADDR"))
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	var calls []string
	res, err := c.Resume(context.Background(), "crash-1", luosho.Tools{"add": func(ctx context.Context, args json.RawMessage) (any, error) {
		call, _ := luosho.CallFromContext(ctx)
		calls = append(calls, call.ID)
		return add(ctx, args)
	}})
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	fmt.Println("RESUMED", res.FinishReason, res.FinalText, strings.Join(calls, ","))
	return 0
}

func helper(t *testing.T, addr, mode string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LUOSHO_HELPER="+mode, "LUOSHO_ADDR="+addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %s: %v\n%s", mode, err, out)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func TestCrashAndResumeFromAFreshProcess(t *testing.T) {
	addr := startDaemon(t)
	c := dial(t, addr)
	ctx := ctxT(t)
	crashed := helper(t, addr, "crash")
	if len(crashed) != 2 || !strings.HasPrefix(crashed[0], "HOLDING ") || crashed[1] != "CRASHED true" {
		t.Fatalf("crash helper said %q", crashed)
	}
	held := strings.TrimPrefix(crashed[0], "HOLDING ")
	cp, err := c.GetSession(ctx, "crash-1")
	if err != nil {
		t.Fatal(err)
	}
	if cp.GetStatus() != pb.CheckpointStatus_CHECKPOINT_STATUS_IN_PROGRESS {
		t.Fatalf("after the crash: %v", cp.GetStatus())
	}
	for _, rec := range cp.GetToolCalls() {
		if rec.GetCall().GetId() == held && rec.ResultJson != nil {
			t.Fatalf("the held call %s has a result", held)
		}
	}
	resumed := helper(t, addr, "resume")
	want := fmt.Sprintf("RESUMED %s done %s", pb.FinishReason_FINISH_REASON_STOP, held)
	if len(resumed) != 1 || resumed[0] != want {
		t.Fatalf("resume helper said %q, want %q", resumed, want)
	}
	cp, err = c.GetSession(ctx, "crash-1")
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_TOOL {
			results = append(results, m.GetToolCallId()+"="+m.GetContent())
		}
	}
	if cp.GetStatus() != pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED || len(results) != 2 || !strings.Contains(results[1], held+`={"sum":7}`) {
		t.Fatalf("transcript after resume: %v %v", cp.GetStatus(), results)
	}
}

// A question tool pauses the run like an approval; WithAnswer answers it and the
// answer is the call's result.
func TestR88QuestionAnswered(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	tools := []luosho.Tool{{Name: "ask", Question: true}}
	agent := scripted("question", tools, `{"tool_calls": [{"name": "ask", "arguments": {"question": "daily or weekly?"}}]}`, sayDone)
	paused, err := c.Execute(ctx, "q-1", agent, "send the report", nil)
	if err != nil {
		t.Fatal(err)
	}
	if paused.FinishReason != pb.FinishReason_FINISH_REASON_AWAITING_APPROVAL {
		t.Fatalf("not paused: %+v", paused)
	}
	for a, err := range c.Approvals(ctx, "q-1") {
		if err != nil {
			t.Fatal(err)
		}
		if a.GetKind() != pb.ApprovalKind_APPROVAL_KIND_QUESTION || a.GetQuestion() != "daily or weekly?" {
			t.Fatalf("approval %v", a)
		}
	}
	done, err := c.Resolve(ctx, paused.ApprovalID, true, "", nil, luosho.WithAnswer("weekly"))
	if err != nil {
		t.Fatal(err)
	}
	if done.FinishReason != pb.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("resolved run: %+v", done)
	}
	cp, err := c.GetSession(ctx, "q-1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_TOOL && m.GetToolName() == "ask" {
			found = m.GetContent() == `{"answer": "weekly"}` && !m.GetIsError()
		}
	}
	if !found {
		t.Fatalf("no answer result in %v", cp.GetMessages())
	}
}
