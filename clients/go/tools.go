package luosho

import (
	"context"
	"encoding/json"
	"fmt"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// ToolFunc runs one tool call: args is the call's arguments (a JSON object). The value it
// returns is sent as the result's JSON (a json.RawMessage is sent as it is); an error is
// sent as an error result {"error": "<message>"} the model can read.
type ToolFunc func(ctx context.Context, args json.RawMessage) (any, error)

// Tools maps tool names to the functions that run them.
type Tools map[string]ToolFunc

// ToolCall describes the call a ToolFunc runs; CallFromContext returns it.
type ToolCall struct {
	SessionID string
	// ID is stable across re-runs of the same call: use it as an idempotency key.
	ID        string
	Name      string
	Step      int32
	TimeoutMs int64
	// Subagent is the sub-agent that asks (nil: the lead); its calls' IDs are qualified
	// by their path ("<lead call id>/<its call id>").
	Subagent *pb.SubAgentTag
	// Attempt is which hand-out of the call this is (R77): 1 the first time, one more each
	// time the same call is handed out again after a daemon restart, a takeover or a
	// resume. For a ReconcileFunc: the attempt of the last hand-out, whose fate is unknown.
	Attempt int32
	// Reconciled says how the call's tool.reconcile was answered when this hand-out
	// follows one (NOT_STARTED, or UNKNOWN also when it went unanswered); UNSPECIFIED
	// when none came first.
	Reconciled pb.ReconcileOutcome
}

// MayHaveRun is true when an earlier hand-out of the call may have had its effect
// (Reconciled is UNKNOWN): the tool checks by ID before acting again.
func (c ToolCall) MayHaveRun() bool {
	return c.Reconciled == pb.ReconcileOutcome_RECONCILE_OUTCOME_UNKNOWN
}

// Reconciled is a ReconcileFunc's answer: Done(result), NotStarted or Unknown.
type Reconciled struct {
	Outcome pb.ReconcileOutcome
	// Result and IsError are the call's result, for DONE (encoded as a ToolFunc's value).
	Result  any
	IsError bool
}

// Done answers a tool.reconcile: the call happened and result is its result; it is
// recorded, and the tool is not run again.
func Done(result any) Reconciled {
	return Reconciled{Outcome: pb.ReconcileOutcome_RECONCILE_OUTCOME_DONE, Result: result}
}

var (
	// NotStarted answers a tool.reconcile: the call never started; it is handed out again.
	NotStarted = Reconciled{Outcome: pb.ReconcileOutcome_RECONCILE_OUTCOME_NOT_STARTED}
	// Unknown answers a tool.reconcile: the client cannot tell; the call is handed out
	// again with Reconciled UNKNOWN, and the tool checks its side effect by the call ID.
	Unknown = Reconciled{Outcome: pb.ReconcileOutcome_RECONCILE_OUTCOME_UNKNOWN}
)

// ReconcileFunc answers a tool.reconcile event (R77): whether the call, handed out before
// with no recorded result, happened. args are the call's arguments; call.ID is the key to
// look it up by. An error answers Unknown.
type ReconcileFunc func(ctx context.Context, call ToolCall, args json.RawMessage) (Reconciled, error)

// Reconcilers maps tool names to their reconcile functions (WithReconcile). A tool.reconcile
// of a tool without one is answered Unknown at once.
type Reconcilers map[string]ReconcileFunc

type callKey struct{}

// CallFromContext returns the tool call a ToolFunc's context belongs to.
func CallFromContext(ctx context.Context) (ToolCall, bool) {
	c, ok := ctx.Value(callKey{}).(ToolCall)
	return c, ok
}

func errorResult(err error) (string, bool) {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b), true
}

// run executes the tool of a tool.call event and returns the result's JSON and is_error.
func (t Tools) run(ctx context.Context, ev *pb.Event) (result string, isError bool) {
	req := ev.GetToolCall()
	call := req.GetCall()
	fn, ok := t[call.GetName()]
	if !ok {
		return errorResult(fmt.Errorf("no tool named %q was given to the client", call.GetName()))
	}
	args := json.RawMessage(call.GetArgumentsJson())
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	ctx = context.WithValue(ctx, callKey{}, ToolCall{
		SessionID: ev.GetSessionId(), ID: call.GetId(), Name: call.GetName(),
		Step: req.GetStep(), TimeoutMs: req.GetTimeoutMs(), Subagent: ev.GetSubagent(),
		Attempt: req.GetAttempt(), Reconciled: req.GetReconciled(),
	})
	defer func() {
		if r := recover(); r != nil {
			result, isError = errorResult(fmt.Errorf("panic: %v", r))
		}
	}()
	value, err := fn(ctx, args)
	if err != nil {
		return errorResult(err)
	}
	return encodeResult(value)
}

// encodeResult is a tool's value as the result's JSON and is_error.
func encodeResult(value any) (string, bool) {
	text, err := jsonText(value)
	if _, raw := value.(string); raw {
		// A Go string is a JSON string result, not JSON text.
		b, _ := json.Marshal(value)
		text, err = string(b), nil
	}
	if err != nil {
		return errorResult(err)
	}
	if text == "" {
		text = "null"
	}
	return text, false
}

// reconcile answers a tool.reconcile event with the tool's ReconcileFunc: the request's
// reconcile outcome, and for DONE the result's JSON and is_error.
func (rs Reconcilers) reconcile(ctx context.Context, ev *pb.Event) (outcome pb.ReconcileOutcome, result string, isError bool) {
	req := ev.GetToolReconcile()
	call := req.GetCall()
	fn, ok := rs[call.GetName()]
	if !ok {
		return Unknown.Outcome, "", false
	}
	args := json.RawMessage(call.GetArgumentsJson())
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	info := ToolCall{
		SessionID: ev.GetSessionId(), ID: call.GetId(), Name: call.GetName(),
		Step: req.GetStep(), TimeoutMs: req.GetTimeoutMs(), Subagent: ev.GetSubagent(),
		Attempt: req.GetAttempt(),
	}
	defer func() {
		if r := recover(); r != nil {
			outcome, result, isError = Unknown.Outcome, "", false
		}
	}()
	answer, err := fn(ctx, info, args)
	switch {
	case err != nil:
		return Unknown.Outcome, "", false
	case answer.Outcome == pb.ReconcileOutcome_RECONCILE_OUTCOME_DONE:
		result, isError = encodeResult(answer.Result)
		return answer.Outcome, result, isError || answer.IsError
	case answer.Outcome == pb.ReconcileOutcome_RECONCILE_OUTCOME_NOT_STARTED:
		return answer.Outcome, "", false
	}
	return Unknown.Outcome, "", false
}

// markReconciled sets Reconcile on the tools of spec (and of its sub-agents) that rs has a
// function for: the flag goes with the function.
func markReconciled(spec *pb.AgentSpec, rs Reconcilers) {
	if spec == nil || len(rs) == 0 {
		return
	}
	for _, t := range spec.GetTools() {
		if _, ok := rs[t.GetName()]; ok {
			t.Reconcile = true
		}
	}
	for _, sub := range spec.GetSubagents() {
		markReconciled(sub.GetAgent(), rs)
	}
}
