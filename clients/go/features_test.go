package luosho_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// Reasoning (R84), compaction (R85), durable sleep (R86) and schedules (R87) through the Go
// client's wrappers, against one real daemon (scripted provider, SQLite).
func TestR84R85R86R87ClientWrappers(t *testing.T) {
	c := dial(t, startDaemon(t))
	t.Run("R84 reasoning", func(t *testing.T) { r84Reasoning(t, c) })
	t.Run("R85 compaction", func(t *testing.T) { r85Compaction(t, c) })
	t.Run("R86 sleep", func(t *testing.T) { r86Sleep(t, c) })
	t.Run("R87 schedules", func(t *testing.T) { r87Schedules(t, c) })
}

// Agent.Reasoning reaches the daemon, the run's reasoning.delta text is Result.Reasoning
// (never FinalText), and the turn keeps its reasoning block.
func r84Reasoning(t *testing.T, c *luosho.Client) {
	ctx := ctxT(t)
	agent := scripted("thinker", []luosho.Tool{{Name: "add"}},
		`{"reasoning": ["I need add."], "tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}`, `{"text": "2"}`)
	agent.Reasoning = &luosho.Reasoning{Effort: "high", BudgetTokens: 4096}
	res, err := c.Execute(ctx, "r84-go", agent, "one plus one", luosho.Tools{"add": add})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.FinalText != "2" || res.Reasoning != "I need add." {
		t.Fatalf("unexpected result: final %q reasoning %q (%v)", res.FinalText, res.Reasoning, res.FinishReason)
	}
	cp, err := c.GetSession(ctx, "r84-go")
	if err != nil {
		t.Fatal(err)
	}
	if r := cp.GetAgent().GetReasoning(); r.GetEffort() != "high" || r.GetBudgetTokens() != 4096 {
		t.Fatalf("saved reasoning %v", r)
	}
	var blocks []string
	for _, m := range cp.GetMessages() {
		for _, b := range m.GetReasoning() {
			blocks = append(blocks, b.GetRawJson())
		}
	}
	if len(blocks) != 1 || !strings.Contains(blocks[0], `"I need add."`) {
		t.Fatalf("reasoning blocks %q", blocks)
	}
}

const compactSummary = "Two pages were fetched and read."

// Agent.Compaction (its summary model) and Client.Compact: a prune by hand, then a
// summary written by the compaction's model.
func r85Compaction(t *testing.T, c *luosho.Client) {
	ctx := ctxT(t)
	fetch := func(_ context.Context, args json.RawMessage) (any, error) {
		return map[string]any{"args": args, "body": strings.Repeat("r", 1500)}, nil
	}
	agent := &luosho.Agent{
		Model: "scripted:pages", Instructions: "You read pages.", Tools: []luosho.Tool{{Name: "fetch"}},
		// A window so large that nothing compacts by itself.
		ModelSettings: map[string]any{"context_window": 1_000_000, "script": []any{
			map[string]any{"text": strings.Repeat("a", 300), "tool_calls": []any{map[string]any{"name": "fetch", "arguments": map[string]int{"page": 1}}}},
			map[string]any{"text": strings.Repeat("b", 300), "tool_calls": []any{map[string]any{"name": "fetch", "arguments": map[string]int{"page": 2}}}},
			map[string]any{"text": "Both pages read."},
		}},
		Compaction: &luosho.Compaction{
			Threshold: 0.5, ProtectTokens: 100, Model: "scripted:sum",
			ModelSettings: map[string]any{"script": []any{map[string]string{"text": compactSummary}}},
		},
	}
	res, err := c.Execute(ctx, "r85-go", agent, "Read pages 1 and 2.", luosho.Tools{"fetch": fetch})
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP {
		t.Fatalf("unexpected result: %+v", res)
	}
	pruned, err := c.Compact(ctx, "r85-go", pb.CompactionStrategy_COMPACTION_STRATEGY_PRUNE)
	if err != nil {
		t.Fatal(err)
	}
	if st := pruned.GetCheckpoint().GetCompaction(); !pruned.GetCompacted() || st.GetPrunedBefore() == 0 || st.GetSummary() != "" {
		t.Fatalf("prune: compacted %v, state %v", pruned.GetCompacted(), st)
	}
	both, err := c.Compact(ctx, "r85-go", pb.CompactionStrategy_COMPACTION_STRATEGY_UNSPECIFIED)
	if err != nil {
		t.Fatal(err)
	}
	if st := both.GetCheckpoint().GetCompaction(); !both.GetCompacted() || st.GetSummary() != compactSummary || st.GetCount() != 2 {
		t.Fatalf("summary: compacted %v, state %v", both.GetCompacted(), st)
	}
	if _, err := c.Compact(ctx, "r85-go-nobody", pb.CompactionStrategy_COMPACTION_STRATEGY_PRUNE); !errors.Is(err, luosho.ErrCheckpointNotFound) {
		t.Fatalf("Compact of no session: %v", err)
	}
}

// Agent.SleepTool: the agent's `sleep` call ends the run SLEEPING with its wake time listed;
// Resume refuses it (ErrSessionSleeping, with WakeAt) until WithWake wakes it now.
func r86Sleep(t *testing.T, c *luosho.Client) {
	ctx := ctxT(t)
	agent := scripted("sleeper", nil, `{"tool_calls": [{"name": "sleep", "arguments": {"seconds": 3600}}]}`, `{"text": "woke"}`)
	agent.SleepTool = true
	before := time.Now()
	res, err := c.Execute(ctx, "r86-go", agent, "nap", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_SLEEPING || res.Status != pb.CheckpointStatus_CHECKPOINT_STATUS_SLEEPING {
		t.Fatalf("unexpected result: %v %v", res.FinishReason, res.Status)
	}
	var sleeping []*pb.SessionSummary
	for s, err := range c.ListSessions(ctx, pb.CheckpointStatus_CHECKPOINT_STATUS_SLEEPING) {
		if err != nil {
			t.Fatal(err)
		}
		sleeping = append(sleeping, s)
	}
	if len(sleeping) != 1 || sleeping[0].GetSessionId() != "r86-go" {
		t.Fatalf("sleeping sessions %v", sleeping)
	}
	wakeAt := sleeping[0].GetWakeAt().AsTime()
	if wakeAt.Before(before.Add(time.Hour-time.Second)) || wakeAt.After(time.Now().Add(time.Hour+time.Second)) {
		t.Fatalf("wake_at %v, want an hour from %v", wakeAt, before)
	}

	_, err = c.Resume(ctx, "r86-go", nil)
	var le *luosho.Error
	if !errors.Is(err, luosho.ErrSessionSleeping) || !errors.As(err, &le) {
		t.Fatalf("Resume without wake: %v", err)
	}
	if at, ok := le.WakeAt(); !ok || at.Sub(wakeAt).Abs() >= time.Millisecond {
		t.Fatalf("the error's wake_at %v (%v), want %v", at, ok, wakeAt)
	}

	res, err = c.Resume(ctx, "r86-go", nil, luosho.WithWake())
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.FinalText != "woke" {
		t.Fatalf("unexpected result after waking: %+v", res)
	}
	cp, err := c.GetSession(ctx, "r86-go")
	if err != nil {
		t.Fatal(err)
	}
	var woken struct{ Woken string }
	for _, m := range cp.GetMessages() {
		if m.GetRole() == pb.Role_ROLE_TOOL && m.GetToolName() == "sleep" {
			if err := json.Unmarshal([]byte(m.GetContent()), &woken); err != nil {
				t.Fatal(err)
			}
		}
	}
	if woken.Woken != "resume" || cp.GetWakeAt() != nil {
		t.Fatalf("sleep result %+v, wake_at %v", woken, cp.GetWakeAt())
	}
	if _, err := c.Resume(ctx, "r86-go", nil, luosho.WithWake()); !errors.Is(err, luosho.ErrNotSleeping) {
		t.Fatalf("a second wake: %v", err)
	}
}

// CreateSchedule, Schedules / Schedule, PauseSchedule, ResumeSchedule, TriggerSchedule (its
// run in session ONE) and DeleteSchedule, with their errors.
func r87Schedules(t *testing.T, c *luosho.Client) {
	ctx := ctxT(t)
	spec := luosho.ScheduleSpec{
		Name: "go-yearly", Cron: "0 0 1 1 *", TimeZone: "Europe/Berlin", Agent: scripted("tick", nil, `{"text": "tock"}`),
		Input: "tick?", Session: pb.ScheduleSession_SCHEDULE_SESSION_ONE,
	}
	created, err := c.CreateSchedule(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if created.GetSpec().GetCron().GetTimeZone() != "Europe/Berlin" || created.GetPaused() || created.GetNextFire() == nil {
		t.Fatalf("created %v", created)
	}
	if _, err := c.CreateSchedule(ctx, spec); !errors.Is(err, luosho.ErrScheduleExists) {
		t.Fatalf("a second create: %v", err)
	}
	bad := spec
	bad.Name, bad.Cron, bad.Interval = "go-bad", "", time.Millisecond
	if _, err := c.CreateSchedule(ctx, bad); !errors.Is(err, luosho.ErrInvalidArgument) {
		t.Fatalf("an interval under a second: %v", err)
	}
	bad.Cron = "0 * * * *"
	if _, err := c.CreateSchedule(ctx, bad); err == nil {
		t.Fatal("a spec with both Cron and Interval was sent")
	}
	paused, err := c.PauseSchedule(ctx, "go-yearly")
	if err != nil {
		t.Fatal(err)
	}
	if !paused.GetPaused() || paused.GetNextFire() != nil {
		t.Fatalf("paused %v", paused)
	}
	resumed, err := c.ResumeSchedule(ctx, "go-yearly")
	if err != nil {
		t.Fatal(err)
	}
	if resumed.GetPaused() || resumed.GetNextFire() == nil {
		t.Fatalf("resumed %v", resumed)
	}
	fire, err := c.TriggerSchedule(ctx, "go-yearly")
	if err != nil {
		t.Fatal(err)
	}
	if fire.GetSessionId() != "schedule:go-yearly" || fire.GetRequestId() == "" {
		t.Fatalf("fire %v", fire)
	}
	for {
		cp, err := c.GetSession(ctx, fire.GetSessionId())
		if err == nil && cp.GetStatus() == pb.CheckpointStatus_CHECKPOINT_STATUS_FINISHED {
			if n := len(cp.GetMessages()); cp.GetMessages()[n-1].GetContent() != "tock" {
				t.Fatalf("the fire's transcript %v", cp.GetMessages())
			}
			break
		}
		if err != nil && !errors.Is(err, luosho.ErrCheckpointNotFound) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the triggered fire did not finish")
		case <-time.After(50 * time.Millisecond):
		}
	}
	got, err := c.Schedule(ctx, "go-yearly")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetFired() != 1 || got.GetLastSessionId() != fire.GetSessionId() {
		t.Fatalf("after the fire %v", got)
	}
	if err := c.DeleteSchedule(ctx, "go-yearly"); err != nil {
		t.Fatal(err)
	}
	all, err := c.Schedules(ctx)
	if err != nil || len(all) != 0 {
		t.Fatalf("schedules left %v (%v)", all, err)
	}
	if err := c.DeleteSchedule(ctx, "go-yearly"); !errors.Is(err, luosho.ErrScheduleNotFound) {
		t.Fatalf("a second delete: %v", err)
	}
	if _, err := c.Schedule(ctx, "go-yearly"); !errors.Is(err, luosho.ErrScheduleNotFound) {
		t.Fatalf("Schedule of a deleted one: %v", err)
	}
}
