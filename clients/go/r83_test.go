package luosho_test

import (
	"errors"
	"reflect"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// R83 against a real daemon: an agent's OutputSchema, the answer decoded by Result.Output
// into the caller's type after one repair turn, and OUTPUT_INVALID with its errors.

type city struct {
	City       string `json:"city"`
	Population int    `json:"population"`
}

var citySchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
	"required":   []string{"city", "population"},
}

func TestR83StructuredOutputDecodedAfterARepairTurn(t *testing.T) {
	c := dial(t, startDaemon(t))
	ctx := ctxT(t)
	agent := scripted("structured", nil, `{"text": "{\"city\": \"Paris\"}"}`, `{"text": "{\"city\": \"Paris\", \"population\": 2}"}`)
	agent.OutputSchema = citySchema
	res, err := c.Execute(ctx, "r83-go-ok", agent, "where?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.StepIndex != 2 {
		t.Fatalf("unexpected result: %+v", res)
	}
	var got city
	if err := res.Output(&got); err != nil {
		t.Fatal(err)
	}
	if got != (city{"Paris", 2}) || string(res.OutputJSON) != `{"city":"Paris","population":2}` {
		t.Fatalf("output %+v, json %s", got, res.OutputJSON)
	}

	bad := scripted("structured", nil, `{"text": "Paris"}`, `{"text": "{\"city\": \"Paris\"}"}`)
	bad.OutputSchema = citySchema
	res, err = c.Execute(ctx, "r83-go-bad", bad, "where?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_OUTPUT_INVALID {
		t.Fatalf("unexpected finish: %v", res.FinishReason)
	}
	if want := []string{"(root): 'population' is a required property"}; !reflect.DeepEqual(res.OutputErrors, want) {
		t.Fatalf("errors %q", res.OutputErrors)
	}
	if err := res.Output(&got); !errors.Is(err, luosho.ErrNoOutput) {
		t.Fatalf("Output without an answer: %v", err)
	}
}
