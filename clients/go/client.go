// Package luosho is the Go client of luoshod, the durable AI-agent run daemon.
//
// A Client runs an agent with Execute: the daemon calls the model, hands every tool call
// to the client, which runs it with the matching ToolFunc and answers with
// SubmitToolResult, until the run is done. Every step is checkpointed by the daemon, so a
// run survives a crash of the client (a cancelled context counts as one): Resume, or
// Execute again, finishes it from any client.
//
// Errors from the daemon are *Error values that match the sentinel of their ErrorInfo
// reason with errors.Is (ErrSessionBusy, ErrSessionAwaitingApproval, …).
package luosho

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"sync"
	"time"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// Event is one event of a session ("run.start", "tool.call", "run.done", …).
type Event = pb.Event

// Client talks to one luoshod daemon. It is safe for concurrent use.
type Client struct {
	conn  *grpc.ClientConn
	rpc   pb.AgentServiceClient
	retry RetryPolicy
	ready connector // the connection a retry waits for (nil: it does not wait)
}

// Dial connects to the daemon at target ("127.0.0.1:50051", "unix:/path/to.sock"). Without
// options the connection is plaintext, as the daemon listens by default. Its reconnect
// backoff follows DefaultRetryPolicy (see RetryPolicy.DialOption); an option given here
// overrides it.
func Dial(target string, opts ...grpc.DialOption) (*Client, error) {
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	policy := DefaultRetryPolicy()
	opts = append([]grpc.DialOption{policy.DialOption()}, opts...)
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, rpc: pb.NewAgentServiceClient(conn), retry: policy, ready: conn}, nil
}

// New wraps a connection the caller owns (Close does not close it). Give that connection
// DefaultRetryPolicy().DialOption() (or your policy's) for retries to find a restarted
// daemon soon. A retry waits for the connection to be ready when conn is a
// *grpc.ClientConn (or has its Connect, GetState and WaitForStateChange).
func New(conn grpc.ClientConnInterface) *Client {
	ready, _ := conn.(connector)
	return &Client{rpc: pb.NewAgentServiceClient(conn), retry: DefaultRetryPolicy(), ready: ready}
}

// WithRetry returns a client on the same connection whose runs (Execute, Resume, Resolve)
// retry as p says; NoRetry makes one attempt and returns its failure. Closing it does not
// close the connection: close c.
func (c *Client) WithRetry(p RetryPolicy) *Client {
	return &Client{rpc: c.rpc, retry: p, ready: c.ready}
}

// Close closes the connection Dial opened.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// RPC is the generated gRPC client, for what this package does not wrap.
func (c *Client) RPC() pb.AgentServiceClient { return c.rpc }

// Result is how a run ended: its run.done event and every event of its stream.
type Result struct {
	SessionID string
	RunID     string
	// FinishReason is STOP, MAX_STEPS, ABORTED, AWAITING_APPROVAL, BUDGET_EXCEEDED /
	// DEADLINE_EXCEEDED when a limit stopped the run (then see BudgetExceeded), or SLEEPING
	// when the agent called `sleep` (R86: Status SLEEPING; GetSession's WakeAt says until
	// when, Resume with WithWake wakes it now).
	FinishReason pb.FinishReason
	Status       pb.CheckpointStatus
	FinalText    string
	StepIndex    int32
	Usage        *pb.Usage
	// ApprovalID is set when the run paused on a tool that needs approval.
	ApprovalID   string
	MessageCount int32
	// Events are the events delivered, each once however many attempts it took.
	Events []*Event
	// RequestID is the run's idempotency key, sent unchanged on every attempt.
	RequestID string
	// Attempts is how many streams the run took (1 unless it was retried).
	Attempts int
	// BudgetExceeded is the run's budget.exceeded event when a limit stopped it: which
	// budget and limit, its value, what was used, the call's worst case, the usage.
	BudgetExceeded *pb.BudgetExceeded
	// OutputJSON is the structured answer of an agent with an OutputSchema, valid against
	// it (FinishReason STOP); empty otherwise. Output decodes it.
	OutputJSON json.RawMessage
	// OutputErrors say why the answer was not valid (FINISH_REASON_OUTPUT_INVALID).
	OutputErrors []string
	// Retries are the run's provider.retry events, in order (R82): the lead's and its
	// sub-agents'.
	Retries []ProviderRetry
	// Fallbacks are the run's provider.fallback events, in order (R82): each turn a
	// fallback model took.
	Fallbacks []ProviderFallback
	// Reasoning is the model's readable reasoning as it streamed (the run's reasoning.delta
	// events, R84), joined; never part of FinalText. Each turn keeps its reasoning blocks
	// in the checkpoint (Message.Reasoning).
	Reasoning string
}

// ProviderRetry is a provider.retry event (R82): Attempt (1 = the first) of a call of
// Model failed with Error, and the provider tries again after Delay. Subagent is the path
// of the sub-agent whose call it was (empty: the lead).
type ProviderRetry struct {
	Step     int32
	Model    string
	Attempt  int32
	Error    string
	Delay    time.Duration
	Subagent []string
}

// ProviderFallback is a provider.fallback event (R82): FromModel failed with Error (its
// Reason and the provider's ErrorType, "circuit_open" when it was skipped) and ToModel
// took the same turn. Subagent is as for ProviderRetry.
type ProviderFallback struct {
	Step      int32
	FromModel string
	ToModel   string
	Error     string
	Reason    string
	ErrorType string
	Subagent  []string
}

// ErrNoOutput is returned by Result.Output for a run without a structured answer.
var ErrNoOutput = errors.New("luosho: the run has no structured output")

// Output decodes the run's structured answer (OutputJSON) into v, as json.Unmarshal does.
func (r *Result) Output(v any) error {
	if len(r.OutputJSON) == 0 {
		return ErrNoOutput
	}
	return json.Unmarshal(r.OutputJSON, v)
}

// RunOption tunes Execute, Resume and Resolve.
type RunOption func(*runOptions)

type runOptions struct {
	onEvent       func(*Event)
	requestID     string
	businessState *string
	messages      []*pb.Message
	agent         *Agent
	historyLimit  *int32
	ifBusy        pb.IfBusy
	retention     *int64
	retry         *RetryPolicy
	sessionID     string
	reconcile     Reconcilers
	answer        string
	wake          bool
}

// WithWake makes Resume wake a sleeping session now (R86): the `sleep` call's result says
// "woken": "resume". Without it, Resume of a sleeping session fails with
// ErrSessionSleeping; with it, Resume of a session that is not sleeping fails with
// ErrNotSleeping.
func WithWake() RunOption { return func(o *runOptions) { o.wake = true } }

// WithAnswer answers a question (an approval of kind QUESTION, R88) in Resolve: the text
// becomes the question call's result {"answer": TEXT}.
func WithAnswer(text string) RunOption { return func(o *runOptions) { o.answer = text } }

// OnEvent calls fn with every event of the run, in order, as it arrives (each once, also
// when the run was retried).
func OnEvent(fn func(*Event)) RunOption { return func(o *runOptions) { o.onEvent = fn } }

// WithRequestID sets the run's idempotency key (docs/reference/rules.md R74), echoed in run.start and
// the daemon's logs; by default each call makes a new one (NewRequestID). It is sent
// unchanged on every retry; the same id with a different request fails with
// ErrRequestIDReused.
func WithRequestID(id string) RunOption { return func(o *runOptions) { o.requestID = id } }

// WithRetry makes this run retry as p says instead of as the client does (NoRetry: one
// attempt).
func WithRetry(p RetryPolicy) RunOption { return func(o *runOptions) { o.retry = &p } }

// WithSessionID gives Resolve the approval's session, so that a retry is recognised even
// when the first attempt broke before its first event (which names the session).
func WithSessionID(id string) RunOption { return func(o *runOptions) { o.sessionID = id } }

// WithBusinessState replaces the session's business state with this JSON text.
func WithBusinessState(jsonText string) RunOption {
	return func(o *runOptions) { o.businessState = &jsonText }
}

// WithMessages sends these messages as input (after the input text, if any).
func WithMessages(msgs ...*pb.Message) RunOption {
	return func(o *runOptions) { o.messages = append(o.messages, msgs...) }
}

// WithReconcile gives the run a reconcile function per tool (R77): a call of such a tool
// handed out before with no recorded result comes as tool.reconcile, answered with the
// function's Done(result), NotStarted or Unknown. The tools it names get Reconcile set in
// the agent sent (Execute's, or WithAgent's). A tool.reconcile of a tool without a
// function is answered Unknown.
func WithReconcile(rs Reconcilers) RunOption { return func(o *runOptions) { o.reconcile = rs } }

// WithAgent gives Resume and Resolve an agent instead of the one saved with the checkpoint.
func WithAgent(a *Agent) RunOption { return func(o *runOptions) { o.agent = a } }

// WithHistoryLimit sets how many history entries the daemon keeps for the session.
func WithHistoryLimit(n int32) RunOption { return func(o *runOptions) { o.historyLimit = &n } }

// WithIfBusy says what Execute does when the session is busy (docs/reference/rules.md R68):
// IF_BUSY_REJECT (the default: ErrSessionBusy), IF_BUSY_ENQUEUE (the input waits in the
// session's queue, then runs; the first event is input.queued), IF_BUSY_INTERRUPT (the
// current run is aborted and the input runs next) or IF_BUSY_ROLLBACK (as INTERRUPT, and
// the session first goes back to its checkpoint from before the aborted run).
func WithIfBusy(m pb.IfBusy) RunOption { return func(o *runOptions) { o.ifBusy = m } }

// WithRetention sets how long the daemon keeps the session once finished (0: forever),
// sent in whole milliseconds.
func WithRetention(d time.Duration) RunOption {
	return func(o *runOptions) { ms := d.Milliseconds(); o.retention = &ms }
}

func (c *Client) collect(opts []RunOption) *runOptions {
	o := &runOptions{}
	for _, f := range opts {
		f(o)
	}
	if o.requestID == "" {
		o.requestID = NewRequestID()
	}
	if o.retry == nil {
		o.retry = &c.retry
	}
	return o
}

// eventStream is one attempt's stream of a run.
type eventStream interface {
	Recv() (*Event, error)
}

type recvFunc func() (*Event, error)

func (f recvFunc) Recv() (*Event, error) { return f() }

// events adapts a generated stream (of ExecuteResponse, ResumeResponse, …) to eventStream.
func events[R interface{ GetEvent() *Event }](s interface{ Recv() (R, error) }) eventStream {
	return recvFunc(func() (*Event, error) {
		r, err := s.Recv()
		if err != nil {
			if t, ok := s.(interface{ Trailer() metadata.MD }); ok && err != io.EOF {
				if v := t.Trailer().Get(pushbackKey); len(v) > 0 {
					return nil, &pushbackError{err, v[0]}
				}
			}
			return nil, err
		}
		return r.GetEvent(), nil
	})
}

// Execute starts, continues or resumes the run of sessionID with input (a user message;
// "" sends none) and runs its tool calls with tools until the run is done.
//
// The request carries a request id (WithRequestID, else a new UUIDv7): when the stream
// breaks (see RetryPolicy) Execute sends it again after a backoff, and the daemon applies
// it once, resuming the run or replaying it if it had ended. Events already delivered are
// not delivered again and a tool runs once per call (a call asked again gets the result
// already computed). Result.Attempts says how many streams it took.
//
// Cancelling ctx is a crash of the client: the stream ends, nothing more is written and
// the checkpoint stays in-progress; Resume (or Execute) from any client finishes the run,
// handing out again the calls that have no result. Execute then returns ctx.Err().
func (c *Client) Execute(ctx context.Context, sessionID string, agent *Agent, input string, tools Tools, opts ...RunOption) (*Result, error) {
	o := c.collect(opts)
	spec, err := agent.Proto()
	if err != nil {
		return nil, err
	}
	markReconciled(spec, o.reconcile)
	req := &pb.ExecuteRequest{
		SessionId: sessionID, Agent: spec, RequestId: o.requestID,
		BusinessStateJson: o.businessState, HistoryLimit: o.historyLimit,
		IfBusy: o.ifBusy, RetentionMs: o.retention,
	}
	if input != "" {
		req.Input = append(req.Input, UserMessage(input))
	}
	req.Input = append(req.Input, o.messages...)
	return c.run(ctx, sessionID, tools, o, func(ctx context.Context, _ string) (eventStream, error) {
		s, err := c.rpc.Execute(ctx, req)
		if err != nil {
			return nil, err
		}
		return events(s), nil
	})
}

// Resume finishes an interrupted (in-progress) run with no new input, with the agent saved
// in the checkpoint unless WithAgent gives one. On a finished session it returns at once
// with a nil error and a Result with no events. It retries as Execute does.
func (c *Client) Resume(ctx context.Context, sessionID string, tools Tools, opts ...RunOption) (*Result, error) {
	o := c.collect(opts)
	spec, err := o.agent.Proto()
	if err != nil {
		return nil, err
	}
	markReconciled(spec, o.reconcile)
	req := &pb.ResumeRequest{SessionId: sessionID, Agent: spec, RequestId: o.requestID, Wake: o.wake}
	res, err := c.run(ctx, sessionID, tools, o, func(ctx context.Context, _ string) (eventStream, error) {
		s, err := c.rpc.Resume(ctx, req)
		if err != nil {
			return nil, err
		}
		return events(s), nil
	})
	if errors.Is(err, ErrIncompleteRun) && len(res.Events) == 0 {
		return res, nil // a finished session: nothing to resume
	}
	return res, err
}

// Resolve decides a pending approval and runs the continued run to its end with tools
// (the approved call, then the rest of the run). It retries as Execute does; WithSessionID
// (the approval's session) lets a retry be recognised even when the first attempt broke
// before its first event, after the approval was claimed.
func (c *Client) Resolve(ctx context.Context, approvalID string, approved bool, note string, tools Tools, opts ...RunOption) (*Result, error) {
	o := c.collect(opts)
	spec, err := o.agent.Proto()
	if err != nil {
		return nil, err
	}
	markReconciled(spec, o.reconcile)
	req := &pb.ResolveRequest{
		ApprovalId: approvalID, Approved: approved, Note: note, Agent: spec,
		RequestId: o.requestID, SessionId: o.sessionID, Answer: o.answer,
	}
	return c.run(ctx, o.sessionID, tools, o, func(ctx context.Context, sessionID string) (eventStream, error) {
		if req.SessionId == "" && sessionID != "" {
			req.SessionId = sessionID // learnt from an earlier attempt's events
		}
		s, err := c.rpc.Resolve(ctx, req)
		if err != nil {
			return nil, err
		}
		return events(s), nil
	})
}

// openFunc opens one attempt's stream; sessionID is the run's session as known so far.
type openFunc func(ctx context.Context, sessionID string) (eventStream, error)

// outcome is a tool call's result, computed once per run.
type outcome struct {
	done    chan struct{}
	result  string
	isError bool
}

// runState is one Execute, Resume or Resolve across its attempts.
type runState struct {
	c      *Client
	ctx    context.Context // the run's: its tools and submissions
	tools  Tools
	o      *runOptions
	policy RetryPolicy
	res    *Result
	seen   uint64 // the highest seq delivered: a retry skips what came before

	wg            sync.WaitGroup
	mu            sync.Mutex
	failure       error // a submission that failed: the run's failure, not retried
	cancelAttempt context.CancelFunc
	outcomes      map[string]*outcome
}

// run drives a run's attempts: each one's events are read, each tool.call is run in its
// own goroutine and its result submitted, until run.done, once every result is submitted.
// A failed attempt is tried again as the policy says; when the run fails, the tools still
// running are cancelled before run returns.
func (c *Client) run(ctx context.Context, sessionID string, tools Tools, o *runOptions, open openFunc) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runState{
		c: c, ctx: ctx, tools: tools, o: o, policy: o.retry.normalized(),
		res:      &Result{SessionID: sessionID, RequestID: o.requestID},
		outcomes: map[string]*outcome{},
	}
	stop := func(err error) (*Result, error) {
		cancel()
		r.wg.Wait()
		return r.res, err
	}
	fruitless := 0       // attempts in a row that made no progress (see RetryPolicy)
	var refused refusals // attempts the daemon's admission refused (see RetryPolicy)
	for {
		r.res.Attempts++
		fruitless++
		got, moved, done, err := r.attempt(open)
		if moved {
			fruitless = 0 // the run got further: a model turn or a tool result
		}
		if done {
			r.wg.Wait()
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.res, r.failure
		}
		r.mu.Lock()
		failure := r.failure
		r.mu.Unlock()
		switch {
		case failure != nil:
			return stop(failure)
		case ctx.Err() != nil:
			return stop(ctx.Err())
		case err == io.EOF:
			return stop(ErrIncompleteRun)
		}
		var wait time.Duration
		if RefusedByAdmission(err, got) {
			// Refused before it started: come back when told, not counted in the row.
			d, ok := r.policy.overloadWait(ctx, err, &refused)
			if !ok {
				return stop(err)
			}
			wait, fruitless = d, fruitless-1
		} else if r.policy.ShouldRetry(err, max(1, fruitless), got) {
			// The policy's backoff, or longer when the daemon said when it will try again
			// (retry_after_s: a provider's backoff or open circuit).
			wait = r.policy.Delay(max(1, fruitless), err)
		} else {
			return stop(err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return stop(ctx.Err())
		}
		// A connection in TRANSIENT_FAILURE fails every RPC at once until its reconnect
		// backoff ends: the next attempt waits for it to be READY (at most MaxBackoff), so
		// that it is not burnt while the daemon is already back.
		waitReady(ctx, c.ready, r.policy.MaxBackoff)
		if ctx.Err() != nil {
			return stop(ctx.Err())
		}
	}
}

// attempt reads one stream: got counts its events, moved is true when one of those not
// delivered before made progress (a model.turn or tool.result, not replayed), done is true
// at run.done; err is the stream's failure (io.EOF: it ended without run.done).
func (r *runState) attempt(open openFunc) (got int, moved, done bool, err error) {
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	r.mu.Lock()
	r.cancelAttempt = cancel
	failed := r.failure != nil
	r.mu.Unlock()
	if failed {
		return 0, false, false, nil
	}
	stream, err := open(ctx, r.res.SessionID)
	if err != nil {
		return 0, false, false, convert(r.ctx, err)
	}
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			return got, moved, false, err
		}
		if err != nil {
			return got, moved, false, convert(r.ctx, err) // before cancel: a cancelled ctx would hide the cause
		}
		got++
		if seq := ev.GetSeq(); seq > 0 && seq <= r.seen {
			continue // delivered by an earlier attempt
		}
		if ev.GetSeq() > r.seen && progress(ev) {
			moved = true
		}
		r.seen = max(r.seen, ev.GetSeq())
		res := r.res
		res.Events = append(res.Events, ev)
		if res.SessionID == "" {
			res.SessionID = ev.GetSessionId() // a Resolve run learns its session here
		}
		res.RunID = ev.GetRunId()
		if r.o.onEvent != nil {
			r.o.onEvent(ev)
		}
		switch ev.GetType() {
		case "tool.call":
			// A replayed call has its result; a daemon tool's call (an MCP tool) is the
			// daemon's to run, never the app's.
			if ev.GetToolCall() != nil && !ev.GetReplayed() && !IsDaemonCall(ev) {
				r.answer(ev)
			}
		case "tool.reconcile":
			if ev.GetToolReconcile() != nil && !ev.GetReplayed() {
				r.answer(ev)
			}
		case "budget.exceeded":
			res.BudgetExceeded = ev.GetBudgetExceeded()
		case "reasoning.delta":
			res.Reasoning += ev.GetReasoningDelta().GetText()
		case "provider.retry":
			if p := ev.GetProviderRetry(); p != nil {
				res.Retries = append(res.Retries, ProviderRetry{
					Step: p.GetStep(), Model: p.GetModel(), Attempt: p.GetAttempt(), Error: p.GetError(),
					Delay: time.Duration(p.GetDelayMs()) * time.Millisecond, Subagent: ev.GetSubagent().GetPath(),
				})
			}
		case "provider.fallback":
			if p := ev.GetProviderFallback(); p != nil {
				res.Fallbacks = append(res.Fallbacks, ProviderFallback{
					Step: p.GetStep(), FromModel: p.GetFromModel(), ToModel: p.GetToModel(), Error: p.GetError(),
					Reason: p.GetReason(), ErrorType: p.GetErrorType(), Subagent: ev.GetSubagent().GetPath(),
				})
			}
		case "run.done":
			d := ev.GetRunDone()
			res.FinishReason = d.GetFinishReason()
			res.Status = d.GetStatus()
			res.FinalText = d.GetFinalText()
			res.StepIndex = d.GetStepIndex()
			res.Usage = d.GetUsage()
			res.ApprovalID = d.GetApprovalId()
			res.MessageCount = d.GetMessageCount()
			if out := d.GetOutputJson(); out != "" {
				res.OutputJSON = json.RawMessage(out)
			}
			res.OutputErrors = d.GetOutputErrors()
			// Read on to the stream's end: the daemon ends it once the run has let go of
			// the session, so that the caller's next request does not find it busy.
			for {
				if _, err := stream.Recv(); err != nil {
					return got, moved, true, nil
				}
			}
		}
	}
}

// answer runs a tool.call's tool (once per call id and run: a call asked again after a
// retry waits for the first one's result) and submits the result, in a goroutine; or
// answers a tool.reconcile (R77): DONE with the result when the tool already ran in this
// run, else with the tool's ReconcileFunc.
func (r *runState) answer(ev *Event) {
	sessionID := ev.GetSessionId()
	if sessionID == "" {
		sessionID = r.res.SessionID
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		req := &pb.SubmitToolResultRequest{SessionId: sessionID}
		asked := ev.GetToolReconcile()
		id := ev.GetToolCall().GetCall().GetId()
		if asked != nil {
			id = asked.GetCall().GetId()
		}
		r.mu.Lock()
		out, ok := r.outcomes[id]
		if !ok && asked == nil {
			out = &outcome{done: make(chan struct{})}
			r.outcomes[id] = out
		}
		r.mu.Unlock()
		switch {
		case asked != nil && !ok:
			req.Reconcile, req.ResultJson, req.IsError = r.o.reconcile.reconcile(r.ctx, ev)
		case !ok:
			out.result, out.isError = r.tools.run(r.ctx, ev)
			close(out.done)
		}
		if out != nil {
			select {
			case <-out.done:
			case <-r.ctx.Done():
				return
			}
			req.ResultJson, req.IsError = out.result, out.isError
			if asked != nil {
				req.Reconcile = pb.ReconcileOutcome_RECONCILE_OUTCOME_DONE // it ran here
			}
		}
		req.ToolCallId = id
		_, err := r.c.rpc.SubmitToolResult(r.ctx, req)
		if err == nil || r.ctx.Err() != nil {
			return // done, or the run is over anyway
		}
		err = convert(r.ctx, err)
		if r.policy.MaxAttempts > 1 && (errors.Is(err, ErrUnavailable) || errors.Is(err, ErrToolCallNotPending)) {
			// The daemon went away with the run: the stream fails too, and its retry asks
			// for this call again. Without retries this is the run's failure.
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.failure == nil {
			r.failure = err
			r.cancelAttempt() // the run would wait for this result until its timeout: fail fast
		}
	}()
}

// SubmitToolResult records the result of a tool call by hand (resultJSON is JSON text).
func (c *Client) SubmitToolResult(ctx context.Context, sessionID, toolCallID, resultJSON string, isError bool) (pb.SubmitOutcome, error) {
	r, err := c.rpc.SubmitToolResult(ctx, &pb.SubmitToolResultRequest{
		SessionId: sessionID, ToolCallId: toolCallID, ResultJson: resultJSON, IsError: isError,
	})
	return r.GetOutcome(), convert(ctx, err)
}

// Cancel aborts the session's running run; false when none was active in this daemon.
func (c *Client) Cancel(ctx context.Context, sessionID string) (bool, error) {
	r, err := c.rpc.Cancel(ctx, &pb.CancelRequest{SessionId: sessionID})
	return r.GetCancelled(), convert(ctx, err)
}

// Queue returns the inputs queued on the session (WithIfBusy), in the order they will run.
func (c *Client) Queue(ctx context.Context, sessionID string) ([]*pb.QueuedInput, error) {
	r, err := c.rpc.GetSession(ctx, &pb.GetSessionRequest{SessionId: sessionID})
	return r.GetQueue(), convert(ctx, err)
}

// DequeueInput removes an input queued on a busy session (WithIfBusy); false when the
// session queues none of that request id. The Execute that queued it fails with
// reason INPUT_DEQUEUED.
func (c *Client) DequeueInput(ctx context.Context, sessionID, requestID string) (bool, error) {
	r, err := c.rpc.DequeueInput(ctx, &pb.DequeueInputRequest{SessionId: sessionID, RequestId: requestID})
	return r.GetRemoved(), convert(ctx, err)
}

// GetSession returns the session's latest checkpoint.
func (c *Client) GetSession(ctx context.Context, sessionID string) (*pb.Checkpoint, error) {
	r, err := c.rpc.GetSession(ctx, &pb.GetSessionRequest{SessionId: sessionID})
	return r.GetCheckpoint(), convert(ctx, err)
}

// DeleteSession deletes a session's checkpoint (and its history unless keepHistory).
func (c *Client) DeleteSession(ctx context.Context, sessionID string, keepHistory bool) (bool, error) {
	r, err := c.rpc.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: sessionID, KeepHistory: keepHistory})
	return r.GetDeleted(), convert(ctx, err)
}

// Compact compacts the session's transcript by hand (R85): strategy
// COMPACTION_STRATEGY_UNSPECIFIED takes the agent's. The response says whether a
// compaction was saved; SESSION_BUSY while a run holds the session.
func (c *Client) Compact(ctx context.Context, sessionID string, strategy pb.CompactionStrategy) (*pb.CompactResponse, error) {
	r, err := c.rpc.Compact(ctx, &pb.CompactRequest{SessionId: sessionID, Strategy: strategy})
	return r, convert(ctx, err)
}

// pages yields the items of every page of a paged RPC.
func pages[T any](ctx context.Context, fetch func(token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		token := ""
		for {
			items, next, err := fetch(token)
			if err != nil {
				var zero T
				yield(zero, convert(ctx, err))
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			token = next
		}
	}
}

// ListSessions yields the sessions (of one status unless UNSPECIFIED), by session id.
func (c *Client) ListSessions(ctx context.Context, status pb.CheckpointStatus) iter.Seq2[*pb.SessionSummary, error] {
	return pages(ctx, func(token string) ([]*pb.SessionSummary, string, error) {
		r, err := c.rpc.ListSessions(ctx, &pb.ListSessionsRequest{Status: status, PageToken: token})
		return r.GetSessions(), r.GetNextPageToken(), err
	})
}

// Approvals yields the pending approvals (of one session unless sessionID is ""), oldest first.
func (c *Client) Approvals(ctx context.Context, sessionID string) iter.Seq2[*pb.Approval, error] {
	return pages(ctx, func(token string) ([]*pb.Approval, string, error) {
		r, err := c.rpc.ListApprovals(ctx, &pb.ListApprovalsRequest{SessionId: sessionID, PageToken: token})
		return r.GetApprovals(), r.GetNextPageToken(), err
	})
}

// History yields the session's checkpoint history, newest first (with each entry's
// checkpoint when includeCheckpoint).
func (c *Client) History(ctx context.Context, sessionID string, includeCheckpoint bool) iter.Seq2[*pb.HistoryEntry, error] {
	return pages(ctx, func(token string) ([]*pb.HistoryEntry, string, error) {
		r, err := c.rpc.History(ctx, &pb.HistoryRequest{
			SessionId: sessionID, PageToken: token, IncludeCheckpoint: includeCheckpoint,
		})
		return r.GetEntries(), r.GetNextPageToken(), err
	})
}

// Fork makes a new session from step fromStep of sessionID's history, with patch applied
// (nil: none); newSessionID "" lets the daemon pick "<session_id>.fork-<n>". Resume the
// new session like any unfinished run.
func (c *Client) Fork(ctx context.Context, sessionID string, fromStep int32, newSessionID string, patch *pb.ForkPatch) (*pb.ForkResponse, error) {
	r, err := c.rpc.Fork(ctx, &pb.ForkRequest{
		SessionId: sessionID, FromStep: fromStep, NewSessionId: newSessionID, Patch: patch,
	})
	return r, convert(ctx, err)
}

// Compare returns two sessions' trajectories side by side.
func (c *Client) Compare(ctx context.Context, sessionA, sessionB string) (*pb.CompareResponse, error) {
	r, err := c.rpc.Compare(ctx, &pb.CompareRequest{SessionIdA: sessionA, SessionIdB: sessionB})
	return r, convert(ctx, err)
}

// Watch yields the session's events with seq > afterSeq: what the event log keeps, then
// live ones. Without follow it ends after the current run; with follow it goes on until
// ctx is cancelled or the loop breaks. After an error (ErrEventsOutOfRange, a daemon
// restart, …) watch again from the last seq seen: no event is lost or repeated.
func (c *Client) Watch(ctx context.Context, sessionID string, afterSeq uint64, follow bool) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.rpc.Watch(ctx, &pb.WatchRequest{SessionId: sessionID, AfterSeq: afterSeq, Follow: follow})
		if err != nil {
			yield(nil, convert(ctx, err))
			return
		}
		for {
			r, err := stream.Recv()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, convert(ctx, err))
				return
			}
			if !yield(r.GetEvent(), nil) {
				return
			}
		}
	}
}
