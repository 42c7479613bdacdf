package luosho_test

import (
	"errors"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// R53 against a real daemon: a tool result sent as input that answers no open call is the
// client's typed invalid-argument error (*luosho.Error, INVALID_MESSAGE, the message's index
// and call id in its metadata), not retried, and nothing is saved. The client sends tool
// messages only when the caller gives them (WithMessages): its run loop answers tool.call
// events through SubmitToolResult, and a retry sends the caller's request as it was.

func toolMessage(callID, content string) *pb.Message {
	return &pb.Message{Role: pb.Role_ROLE_TOOL, ToolCallId: callID, ToolName: "add", Content: content}
}

// invalidMessage checks err is R53's refusal of input[index] for callID, on one attempt.
func invalidMessage(t *testing.T, res *luosho.Result, err error, index, callID string) {
	t.Helper()
	if !errors.Is(err, luosho.ErrInvalidArgument) {
		t.Fatalf("want ErrInvalidArgument, got %v", err)
	}
	var e *luosho.Error
	if !errors.As(err, &e) || e.Reason != "INVALID_MESSAGE" || e.Metadata["index"] != index ||
		e.Metadata["tool_call_id"] != callID {
		t.Fatalf("want INVALID_MESSAGE naming input[%s] %s, got %#v", index, callID, e)
	}
	if res == nil || res.Attempts != 1 || len(res.Events) != 0 {
		t.Fatalf("an invalid argument is not retried and runs nothing: %+v", res)
	}
}

func TestAnOrphanToolResultInANewSessionIsInvalidArgument(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	res, err := c.Execute(ctx, "r53-new", scripted("r53", addTool, sayDone), "Read gauge G-1", nil,
		luosho.WithMessages(toolMessage("call_x_9", `{"bar": 1}`)))
	invalidMessage(t, res, err, "1", "call_x_9")
	if _, err := c.GetSession(ctx, "r53-new"); !errors.Is(err, luosho.ErrCheckpointNotFound) {
		t.Fatalf("the refused session was saved: %v", err)
	}
}

func TestASecondResultAfterAFinishedRunIsInvalidArgument(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	agent := scripted("r53", addTool, callAdd12, sayDone)
	if _, err := c.Execute(ctx, "r53-done", agent, "add", luosho.Tools{"add": add}); err != nil {
		t.Fatal(err)
	}
	before, err := c.GetSession(ctx, "r53-done")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Execute(ctx, "r53-done", agent, "", nil, luosho.WithMessages(toolMessage("call_0_0", `{"bar": 9}`)))
	invalidMessage(t, res, err, "0", "call_0_0")
	after, err := c.GetSession(ctx, "r53-done")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetVersion() != before.GetVersion() || len(after.GetMessages()) != len(before.GetMessages()) {
		t.Fatalf("the refused input changed the session: version %d -> %d", before.GetVersion(), after.GetVersion())
	}
}
