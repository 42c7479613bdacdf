// Command xlang-subagent-start is the Go leg of the sub-agent cross-language test
// (tests/clients/test_subagents_across_languages.py): it starts a run whose sub-agent's call pauses on an
// approval, answering the sub-agent's lookup (and recording which sub-agent asked), and
// prints the approval id and the sub-agent's path.
//
//	go run ./cmd/xlang-subagent-start ADDR SESSION_ID
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	luosho "github.com/luoshod/luoshod/clients/go"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: xlang-subagent-start ADDR SESSION_ID")
	}
	c, err := luosho.Dial(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	payer := &luosho.Agent{
		Model: "scripted:payer",
		Tools: []luosho.Tool{{Name: "lookup"}, {Name: "pay", NeedsApproval: true}},
		ModelSettings: map[string]any{"script": []map[string]any{
			{"tool_calls": []map[string]any{{"name": "lookup", "arguments": map[string]any{"order": 7}}}},
			{"tool_calls": []map[string]any{{"name": "pay", "arguments": map[string]any{"eur": 40}}}},
			{"text": "paid 40"},
		}},
	}
	lead := &luosho.Agent{
		Model: "scripted:lead",
		ModelSettings: map[string]any{"script": []map[string]any{
			{"tool_calls": []map[string]any{{"name": "task", "arguments": map[string]any{"agent": "payer", "prompt": "pay order 7"}}}},
			{"text": "order 7 paid"},
		}},
		Subagents: []luosho.SubAgent{{Name: "payer", Description: "pays orders", Agent: payer}},
	}
	asked := ""
	lookup := func(ctx context.Context, args json.RawMessage) (any, error) {
		call, _ := luosho.CallFromContext(ctx)
		if call.Subagent != nil {
			asked = call.Subagent.GetName() + ":" + call.ID
		}
		return "go:lookup", nil
	}
	res, err := c.Execute(context.Background(), os.Args[2], lead, "pay order 7", luosho.Tools{"lookup": lookup})
	if err != nil {
		log.Fatal(err)
	}
	path := ""
	for a, err := range c.Approvals(context.Background(), os.Args[2]) {
		if err != nil {
			log.Fatal(err)
		}
		path = strings.Join(a.GetSubagentPath(), "/")
	}
	fmt.Println(res.ApprovalID, path, asked)
}
