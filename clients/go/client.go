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
	"errors"
	"io"
	"iter"
	"sync"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Event is one event of a session ("run.start", "tool.call", "run.done", …).
type Event = pb.Event

// Client talks to one luoshod daemon. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn
	rpc  pb.AgentServiceClient
}

// Dial connects to the daemon at target ("127.0.0.1:50051"). Without options the
// connection is plaintext, as the daemon listens by default.
func Dial(target string, opts ...grpc.DialOption) (*Client, error) {
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, rpc: pb.NewAgentServiceClient(conn)}, nil
}

// New wraps a connection the caller owns (Close does not close it).
func New(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: pb.NewAgentServiceClient(conn)}
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
	SessionID    string
	RunID        string
	FinishReason pb.FinishReason
	Status       pb.CheckpointStatus
	FinalText    string
	StepIndex    int32
	Usage        *pb.Usage
	// ApprovalID is set when the run paused on a tool that needs approval.
	ApprovalID   string
	MessageCount int32
	Events       []*Event
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
}

// OnEvent calls fn with every event of the run, in order, as it arrives.
func OnEvent(fn func(*Event)) RunOption { return func(o *runOptions) { o.onEvent = fn } }

// WithRequestID sets the request id echoed in run.start and the daemon's logs.
func WithRequestID(id string) RunOption { return func(o *runOptions) { o.requestID = id } }

// WithBusinessState replaces the session's business state with this JSON text.
func WithBusinessState(jsonText string) RunOption {
	return func(o *runOptions) { o.businessState = &jsonText }
}

// WithMessages sends these messages as input (after the input text, if any).
func WithMessages(msgs ...*pb.Message) RunOption {
	return func(o *runOptions) { o.messages = append(o.messages, msgs...) }
}

// WithAgent gives Resume and Resolve an agent instead of the one saved with the checkpoint.
func WithAgent(a *Agent) RunOption { return func(o *runOptions) { o.agent = a } }

// WithHistoryLimit sets how many history entries the daemon keeps for the session.
func WithHistoryLimit(n int32) RunOption { return func(o *runOptions) { o.historyLimit = &n } }

func collect(opts []RunOption) *runOptions {
	o := &runOptions{}
	for _, f := range opts {
		f(o)
	}
	return o
}

// eventStream is what Execute, Resume and Resolve return.
type eventStream interface {
	Recv() (*Event, error)
}

type recvFunc func() (*Event, error)

func (f recvFunc) Recv() (*Event, error) { return f() }

// Execute starts, continues or resumes the run of sessionID with input (a user message;
// "" sends none) and runs its tool calls with tools until the run is done.
//
// Cancelling ctx is a crash of the client: the stream ends, nothing more is written and
// the checkpoint stays in-progress; Resume (or Execute) from any client finishes the run,
// handing out again the calls that have no result. Execute then returns ctx.Err().
func (c *Client) Execute(ctx context.Context, sessionID string, agent *Agent, input string, tools Tools, opts ...RunOption) (*Result, error) {
	o := collect(opts)
	spec, err := agent.Proto()
	if err != nil {
		return nil, err
	}
	req := &pb.ExecuteRequest{
		SessionId: sessionID, Agent: spec, RequestId: o.requestID,
		BusinessStateJson: o.businessState, HistoryLimit: o.historyLimit,
	}
	if input != "" {
		req.Input = append(req.Input, UserMessage(input))
	}
	req.Input = append(req.Input, o.messages...)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Execute(ctx, req)
	if err != nil {
		return nil, convert(ctx, err)
	}
	return c.drive(ctx, sessionID, recvFunc(func() (*Event, error) {
		r, err := stream.Recv()
		return r.GetEvent(), err
	}), tools, o, cancel)
}

// Resume finishes an interrupted (in-progress) run with no new input, with the agent saved
// in the checkpoint unless WithAgent gives one. On a finished session it returns at once
// with a nil error and a Result with no events.
func (c *Client) Resume(ctx context.Context, sessionID string, tools Tools, opts ...RunOption) (*Result, error) {
	o := collect(opts)
	spec, err := o.agent.Proto()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Resume(ctx, &pb.ResumeRequest{SessionId: sessionID, Agent: spec, RequestId: o.requestID})
	if err != nil {
		return nil, convert(ctx, err)
	}
	res, err := c.drive(ctx, sessionID, recvFunc(func() (*Event, error) {
		r, err := stream.Recv()
		return r.GetEvent(), err
	}), tools, o, cancel)
	if errors.Is(err, ErrIncompleteRun) && len(res.Events) == 0 {
		return res, nil // a finished session: nothing to resume
	}
	return res, err
}

// Resolve decides a pending approval and runs the continued run to its end with tools
// (the approved call, then the rest of the run).
func (c *Client) Resolve(ctx context.Context, approvalID string, approved bool, note string, tools Tools, opts ...RunOption) (*Result, error) {
	o := collect(opts)
	spec, err := o.agent.Proto()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.rpc.Resolve(ctx, &pb.ResolveRequest{
		ApprovalId: approvalID, Approved: approved, Note: note, Agent: spec, RequestId: o.requestID,
	})
	if err != nil {
		return nil, convert(ctx, err)
	}
	return c.drive(ctx, "", recvFunc(func() (*Event, error) {
		r, err := stream.Recv()
		return r.GetEvent(), err
	}), tools, o, cancel)
}

// drive reads a run's events, runs each tool.call in its own goroutine and submits the
// result, and returns at run.done once every result is submitted. When the stream fails,
// cancel stops the tools still running before drive returns.
func (c *Client) drive(ctx context.Context, sessionID string, stream eventStream, tools Tools, o *runOptions, cancel context.CancelFunc) (*Result, error) {
	res := &Result{SessionID: sessionID}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		toolErr error
	)
	wait := func() error {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return toolErr
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if err != io.EOF {
				err = convert(ctx, err) // before cancel: a cancelled ctx would hide the cause
			}
			cancel()
			werr := wait()
			if err != io.EOF {
				return res, err
			}
			if werr != nil && !errors.Is(werr, context.Canceled) {
				return res, werr
			}
			return res, ErrIncompleteRun
		}
		res.Events = append(res.Events, ev)
		if res.SessionID == "" {
			res.SessionID = ev.GetSessionId()
		}
		res.RunID = ev.GetRunId()
		if o.onEvent != nil {
			o.onEvent(ev)
		}
		switch ev.GetType() {
		case "tool.call":
			wg.Add(1)
			go func(ev *Event) {
				defer wg.Done()
				result, isError := tools.run(ctx, ev)
				_, err := c.rpc.SubmitToolResult(ctx, &pb.SubmitToolResultRequest{
					SessionId: ev.GetSessionId(), ToolCallId: ev.GetToolCall().GetCall().GetId(),
					ResultJson: result, IsError: isError,
				})
				if err != nil {
					mu.Lock()
					if toolErr == nil {
						toolErr = convert(ctx, err)
					}
					mu.Unlock()
				}
			}(ev)
		case "run.done":
			done := ev.GetRunDone()
			res.FinishReason = done.GetFinishReason()
			res.Status = done.GetStatus()
			res.FinalText = done.GetFinalText()
			res.StepIndex = done.GetStepIndex()
			res.Usage = done.GetUsage()
			res.ApprovalID = done.GetApprovalId()
			res.MessageCount = done.GetMessageCount()
			if err := wait(); err != nil {
				return res, err
			}
			return res, nil
		}
	}
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
