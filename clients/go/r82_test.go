package luosho_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// R82 against a real daemon calling the fake model server (scenario "fallback": the model
// "down" answers HTTP 503, "test-model" answers): the run's provider.retry and
// provider.fallback events typed in Result.Retries and Result.Fallbacks, the lead's and a
// sub-agent's with its path.
func TestR82RetriesAndFallbacksAreInTheResult(t *testing.T) {
	fake := startFakeModel(t, "anthropic", "fallback", "--fast")
	dir := t.TempDir()
	addr, stop, err := launchEnv(dir, "127.0.0.1:0", []string{fake.KeyEnv + "=" + fake.Key}, "--config", fake.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			t.Logf("daemon log (last 4000 bytes):\n%s", tail(string(log), 4000))
		}
	})
	c := dial(t, addr)
	ctx := ctxT(t)

	agent := &luosho.Agent{Model: "llm:down", Instructions: "Answer.", FallbackModels: []string{fake.Model}}
	res, err := c.Execute(ctx, "r82-go-lead", agent, "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinishReason != pb.FinishReason_FINISH_REASON_STOP || res.FinalText != "done" {
		t.Fatalf("unexpected result: %+v", res)
	}
	if len(res.Retries) != 1 {
		t.Fatalf("retries %+v, want one", res.Retries)
	}
	r := res.Retries[0]
	if r.Step != 1 || r.Model != "llm:down" || r.Attempt != 1 || len(r.Subagent) != 0 || !strings.Contains(r.Error, "503") || r.Delay < 0 {
		t.Fatalf("retry %+v", r)
	}
	want := []luosho.ProviderFallback{{Step: 1, FromModel: "llm:down", ToModel: fake.Model, Reason: "PROVIDER_ERROR", ErrorType: "overloaded_error"}}
	got := slices.Clone(res.Fallbacks)
	for i := range got {
		if !strings.Contains(got[i].Error, "2 attempt(s)") {
			t.Fatalf("fallback error %q", got[i].Error)
		}
		got[i].Error = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fallbacks %+v, want %+v", got, want)
	}
	if s := fake.stats(t); !slices.Equal(s.Statuses, []int{503, 503, 200}) {
		t.Fatalf("the fake model server answered %v", s.Statuses)
	}

	researcher := &luosho.Agent{Model: "llm:down", Instructions: "Research.", FallbackModels: []string{fake.Model}}
	lead := scripted("lead", nil, `{"tool_calls": [{"name": "task", "arguments": {"agent": "researcher", "prompt": "find it", "description": "d"}}]}`, `{"text": "all done"}`)
	lead.Subagents = []luosho.SubAgent{{Name: "researcher", Description: "finds facts", Agent: researcher}}
	res, err = c.Execute(ctx, "r82-go-sub", lead, "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalText != "all done" || len(res.Retries) != 1 || len(res.Fallbacks) != 1 {
		t.Fatalf("unexpected result: %+v", res)
	}
	if p := res.Retries[0].Subagent; !slices.Equal(p, []string{"researcher"}) {
		t.Fatalf("retry's sub-agent path %q", p)
	}
	if f := res.Fallbacks[0]; !slices.Equal(f.Subagent, []string{"researcher"}) || f.FromModel != "llm:down" || f.ToModel != fake.Model {
		t.Fatalf("fallback %+v", f)
	}
}
