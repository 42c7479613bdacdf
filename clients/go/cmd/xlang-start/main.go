// Command xlang-start is the Go leg of the cross-language test (tests/clients/test_cross_language.py):
// it starts a run whose turn pauses on an approval, answering the calls it may run, and
// prints the approval id.
//
//	go run ./cmd/xlang-start ADDR SESSION_ID
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	luosho "github.com/luoshod/luoshod/clients/go"
)

// Script is the agent's scripted model, shared by the three legs of the test.
var Script = []map[string]any{
	{"tool_calls": []map[string]any{
		{"name": "lookup", "arguments": map[string]any{"order": 7}},
		{"name": "pay", "arguments": map[string]any{"eur": 40}},
	}},
	{"tool_calls": []map[string]any{{"name": "notify", "arguments": map[string]any{"to": "ana"}}}},
	{"text": "paid and notified"},
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: xlang-start ADDR SESSION_ID")
	}
	c, err := luosho.Dial(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	agent := &luosho.Agent{
		Model:         "scripted:xlang",
		Tools:         []luosho.Tool{{Name: "lookup"}, {Name: "pay", NeedsApproval: true}, {Name: "notify"}},
		ModelSettings: map[string]any{"script": Script},
	}
	lookup := func(ctx context.Context, args json.RawMessage) (any, error) { return "go:lookup", nil }
	res, err := c.Execute(context.Background(), os.Args[2], agent, "pay order 7", luosho.Tools{"lookup": lookup})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.ApprovalID)
}
