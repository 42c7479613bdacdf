package luosho

import (
	"encoding/json"
	"fmt"
	"time"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/protobuf/proto"
)

// Tool is a tool the agent may call; the client runs it (see ToolFunc).
type Tool struct {
	Name        string
	Description string
	// InputSchema is a JSON Schema for the arguments: a json.RawMessage, a string of
	// JSON, or any value encoding/json can encode. Nil means any JSON object.
	InputSchema any
	// NeedsApproval pauses the run for a human decision (Resolve) before the call runs.
	NeedsApproval bool
	// Reconcile (R77): a call handed out before with no recorded result is first put to
	// the client as tool.reconcile (set for you on the tools WithReconcile gives a function).
	Reconcile bool
	// Question (R88): a question to a person, never run by the client. A call pauses the
	// run like NeedsApproval, with an approval of kind QUESTION; answer it with Resolve
	// and WithAnswer, and the call's result is {"answer": TEXT}.
	Question bool
}

// Agent is what runs: the model, its instructions, its tools and its limits.
type Agent struct {
	Model        string // "provider:model", e.g. "scripted:demo"
	Instructions string
	Tools        []Tool
	// MaxSteps is the number of model calls allowed in one run; nil means the default (10).
	MaxSteps *int32
	// ToolConcurrency is how many tool calls of one turn are handed out at once (0: default 1).
	ToolConcurrency int32
	OnAgentDrift    pb.AgentDriftPolicy
	// ModelSettings is the provider's settings (temperature, the scripted provider's
	// "script", …): a json.RawMessage, a string of JSON, or any value encoding/json encodes.
	ModelSettings any
	// ToolTimeout is how long the run waits for a tool result (0: the daemon's default).
	ToolTimeout time.Duration
	// ApprovalTimeout rejects a pending approval after this long (0: never).
	ApprovalTimeout time.Duration
	// McpServers are MCP servers of the daemon's configuration whose tools the agent
	// uses ("<server>__<tool>"); the daemon runs them (see McpServer, IsDaemonCall).
	McpServers []*pb.McpServerUse
	// Subagents are named agents the lead hands tasks to through the daemon's "task" tool
	// (docs/reference/rules.md R55). Their tools are run by the same Tools as the lead's; a ToolFunc
	// sees which sub-agent asks in CallFromContext(ctx).Subagent.
	Subagents []SubAgent
	// MaxSubagentDepth bounds the tree of sub-agents (0: the daemon's default, 1); read
	// on the top-level agent only.
	MaxSubagentDepth int32
	// OutputSchema is a JSON Schema the run's final answer must be JSON valid against
	// (docs/reference/rules.md R83): a json.RawMessage, a string of JSON, or a value
	// marshaled to JSON. Result.Output decodes the answer.
	OutputSchema any
	// FallbackModels ("provider:model") take a turn, in order, when the model fails with a
	// retryable error after its retries or its circuit is open (docs/reference/rules.md
	// R82); Result.Retries and Result.Fallbacks say what happened.
	FallbackModels []string
	// Reasoning says how much the model reasons before it answers (docs/reference/rules.md
	// R84); nil: the provider's default. Result.Reasoning is what it streamed.
	Reasoning *Reasoning
	// Compaction compacts a long transcript before a model call (docs/reference/rules.md
	// R85); nil: never by itself (Client.Compact compacts by hand).
	Compaction *Compaction
	// SleepTool gives the agent the daemon's `sleep` tool (docs/reference/rules.md R86): its
	// call ends the run with FINISH_REASON_SLEEPING and the session SLEEPING until its
	// time, when a daemon resumes it (or earlier: Resume with WithWake). Lead agent only.
	SleepTool bool
}

// Reasoning is how much the model reasons (R84): an Effort ("minimal", "low", "medium",
// "high"), a token budget (BudgetTokens, 0: unset), or both; each provider takes the one
// its API has.
type Reasoning struct {
	Effort       string
	BudgetTokens int64
}

// Compaction is when and how a long transcript is compacted before a model call (R85):
// when the request passes Threshold of the model's context window (0: 0.8), old tool
// results become a marker, then (strategy BOTH, the default) the oldest turns one summary
// written by Model (""; the agent's) with ModelSettings. The newest ProtectTokens stay.
type Compaction struct {
	Threshold     float64
	ProtectTokens int64
	Strategy      pb.CompactionStrategy
	Model         string
	// ModelSettings: a json.RawMessage, a string of JSON, or a value marshaled to JSON.
	ModelSettings any
}

// SubAgent is a named sub-agent: the lead's model chooses it by Description, and it runs
// as Agent (its own model, instructions and tools) on the task's prompt alone.
type SubAgent struct {
	Name        string
	Description string
	Agent       *Agent
}

// Int32 returns a pointer to v (for Agent.MaxSteps).
func Int32(v int32) *int32 { return &v }

func jsonText(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.RawMessage:
		return string(x), nil
	case []byte:
		return string(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Proto returns the AgentSpec message of the agent.
func (a *Agent) Proto() (*pb.AgentSpec, error) {
	if a == nil {
		return nil, nil
	}
	settings, err := jsonText(a.ModelSettings)
	if err != nil {
		return nil, fmt.Errorf("luosho: agent model settings: %w", err)
	}
	spec := &pb.AgentSpec{
		Model:             a.Model,
		Instructions:      a.Instructions,
		MaxSteps:          a.MaxSteps,
		OnAgentDrift:      a.OnAgentDrift,
		ModelSettingsJson: settings,
	}
	if a.ToolConcurrency != 0 {
		spec.ToolConcurrency = proto.Int32(a.ToolConcurrency)
	}
	if a.ToolTimeout != 0 {
		spec.ToolTimeoutMs = proto.Int64(a.ToolTimeout.Milliseconds())
	}
	if a.ApprovalTimeout != 0 {
		spec.ApprovalTimeoutMs = proto.Int64(a.ApprovalTimeout.Milliseconds())
	}
	spec.McpServers = a.McpServers
	for _, sub := range a.Subagents {
		nested, err := sub.Agent.Proto()
		if err != nil {
			return nil, fmt.Errorf("luosho: sub-agent %q: %w", sub.Name, err)
		}
		spec.Subagents = append(spec.Subagents, &pb.SubAgent{Name: sub.Name, Description: sub.Description, Agent: nested})
	}
	if a.MaxSubagentDepth != 0 {
		spec.MaxSubagentDepth = proto.Int32(a.MaxSubagentDepth)
	}
	output, err := jsonText(a.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("luosho: output schema: %w", err)
	}
	spec.OutputSchemaJson = output
	spec.FallbackModels = a.FallbackModels
	if r := a.Reasoning; r != nil {
		spec.Reasoning = &pb.Reasoning{Effort: r.Effort}
		if r.BudgetTokens != 0 {
			spec.Reasoning.BudgetTokens = proto.Int64(r.BudgetTokens)
		}
	}
	if c := a.Compaction; c != nil {
		settings, err := jsonText(c.ModelSettings)
		if err != nil {
			return nil, fmt.Errorf("luosho: compaction model settings: %w", err)
		}
		spec.Compaction = &pb.Compaction{
			Threshold: c.Threshold, ProtectTokens: c.ProtectTokens, Strategy: c.Strategy,
			Model: c.Model, ModelSettingsJson: settings,
		}
	}
	spec.SleepTool = a.SleepTool
	for _, t := range a.Tools {
		schema, err := jsonText(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("luosho: input schema of tool %q: %w", t.Name, err)
		}
		spec.Tools = append(spec.Tools, &pb.ToolSpec{
			Name: t.Name, Description: t.Description, InputSchemaJson: schema, NeedsApproval: t.NeedsApproval,
			Reconcile: t.Reconcile, Question: t.Question,
		})
	}
	return spec, nil
}

// UserMessage is a user message for the input of a run.
func UserMessage(text string) *pb.Message {
	return &pb.Message{Role: pb.Role_ROLE_USER, Content: text}
}
