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
}

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
