package luosho_test

// A run a limit stopped: its typed finish reason and the budget.exceeded event's payload in
// the Result, against a fake daemon (bufconn) that sends what the daemon sends then.

import (
	"testing"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

func TestARunALimitStoppedCarriesItsFinishReasonAndBudget(t *testing.T) {
	for _, reason := range []pb.FinishReason{
		pb.FinishReason_FINISH_REASON_BUDGET_EXCEEDED, pb.FinishReason_FINISH_REASON_DEADLINE_EXCEEDED,
	} {
		f := &fakeDaemon{}
		f.play = func(_ int, send func(*pb.Event)) error {
			send(ev(1, "run.start"))
			tripped := ev(2, "budget.exceeded")
			tripped.Payload = &pb.Event_BudgetExceeded{BudgetExceeded: &pb.BudgetExceeded{
				Scope: "session", Limit: "cost_usd", Value: 2, Used: 1.75, WorstCase: 0.5,
				Usage: &pb.Usage{PromptTokens: 900, CostUsd: 1.75, CachedInputTokens: 600, ReasoningTokens: 12},
			}}
			send(tripped)
			done := ev(3, "run.done")
			done.Payload = &pb.Event_RunDone{RunDone: &pb.RunDone{
				FinishReason: reason, Status: pb.CheckpointStatus_CHECKPOINT_STATUS_IN_PROGRESS,
			}}
			send(done)
			return nil
		}
		c := serveFake(t, f)
		res, err := c.Execute(ctxT(t), "s-1", scripted("x", nil), "hi", nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != reason || res.Status != pb.CheckpointStatus_CHECKPOINT_STATUS_IN_PROGRESS {
			t.Fatalf("finish reason %v, status %v", res.FinishReason, res.Status)
		}
		b := res.BudgetExceeded
		if b == nil || b.GetScope() != "session" || b.GetLimit() != "cost_usd" || b.GetValue() != 2 ||
			b.GetUsed() != 1.75 || b.GetWorstCase() != 0.5 || b.GetUsage().GetCachedInputTokens() != 600 ||
			b.GetUsage().GetReasoningTokens() != 12 {
			t.Fatalf("budget exceeded %v", b)
		}
	}
}
