package luosho

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// ErrorDomain is the ErrorInfo domain of every error the daemon sends.
const ErrorDomain = "luosho.dev"

// Sentinel errors, one per ErrorInfo reason. Every *Error matches the sentinel of its
// reason with errors.Is:
//
//	if errors.Is(err, luosho.ErrSessionBusy) { ... }
//
// and errors.As gives the details:
//
//	var e *luosho.Error
//	if errors.As(err, &e) { fmt.Println(e.Code, e.Reason, e.Metadata, e.ApprovalID()) }
var (
	ErrInvalidArgument         = errors.New("luosho: invalid argument") // any INVALID_ARGUMENT reason
	ErrCheckpointNotFound      = errors.New("luosho: CHECKPOINT_NOT_FOUND")
	ErrApprovalNotFound        = errors.New("luosho: APPROVAL_NOT_FOUND")
	ErrToolCallNotFound        = errors.New("luosho: TOOL_CALL_NOT_FOUND")
	ErrSessionExists           = errors.New("luosho: SESSION_EXISTS")
	ErrEventsOutOfRange        = errors.New("luosho: EVENTS_OUT_OF_RANGE")
	ErrToolCallNotPending      = errors.New("luosho: TOOL_CALL_NOT_PENDING")
	ErrSessionAwaitingApproval = errors.New("luosho: SESSION_AWAITING_APPROVAL")
	ErrAgentDrift              = errors.New("luosho: AGENT_DRIFT")
	ErrResumeToolMissing       = errors.New("luosho: RESUME_TOOL_MISSING")
	ErrSessionBusy             = errors.New("luosho: SESSION_BUSY")
	ErrLeaseLost               = errors.New("luosho: LEASE_LOST")
	ErrPayloadTooLarge         = errors.New("luosho: PAYLOAD_TOO_LARGE")
	ErrStoreFull               = errors.New("luosho: STORE_FULL")
	ErrStoreUnavailable        = errors.New("luosho: STORE_UNAVAILABLE")
	// ErrProvider matches every failure of a model call: PROVIDER_ERROR (UNAVAILABLE, a
	// transient failure the daemon's own retries did not fix, retried by the client) and
	// PROVIDER_REJECTED (see ErrProviderRejected).
	ErrProvider = errors.New("luosho: PROVIDER_ERROR")
	// ErrProviderRejected: the provider refused the model call in a way no retry can fix
	// (HTTP 400, 401, 403, 404, 422, a refused setting, a context-length error, a
	// malformed answer). The daemon answers FAILED_PRECONDITION and the client does not
	// retry it. It also matches ErrProvider. The *Error's Metadata names the provider,
	// the model, the HTTP "status", the provider's "error_type" and "provider_message"
	// (see ProviderStatus and ProviderMessage).
	ErrProviderRejected error = &narrower{"luosho: PROVIDER_REJECTED", ErrProvider}
	ErrShuttingDown           = errors.New("luosho: SHUTTING_DOWN")
	// ErrRequestIDReused: the request id was already used with a different request (R74).
	ErrRequestIDReused = errors.New("luosho: REQUEST_ID_REUSED")
	// ErrSessionSleeping: the session sleeps (R86) — Execute without an if-busy mode, or
	// Resume without WithWake. The *Error's WakeAt says until when.
	ErrSessionSleeping = errors.New("luosho: SESSION_SLEEPING")
	// ErrNotSleeping: Resume WithWake of a session that is not sleeping (R86).
	ErrNotSleeping = errors.New("luosho: NOT_SLEEPING")
	// ErrScheduleExists: CreateSchedule with the name of a schedule that exists (R87).
	ErrScheduleExists = errors.New("luosho: SCHEDULE_EXISTS")
	// ErrScheduleNotFound: no schedule has that name (R87).
	ErrScheduleNotFound = errors.New("luosho: SCHEDULE_NOT_FOUND")
	// ErrUnavailable matches every UNAVAILABLE error (daemon unreachable, SHUTTING_DOWN, …).
	ErrUnavailable = errors.New("luosho: unavailable")
	// ErrIncompleteRun: a run's stream ended without run.done (client side).
	ErrIncompleteRun = errors.New("luosho: the run's stream ended without run.done")
)

// narrower is a sentinel that also matches a broader one (errors.Is sees through it).
type narrower struct {
	msg   string
	wider error
}

func (n *narrower) Error() string { return n.msg }
func (n *narrower) Unwrap() error { return n.wider }

// reasonPrefix begins every ErrorReason value's name; the ErrorInfo reason is the name
// without it (ERROR_REASON_SESSION_BUSY travels as "SESSION_BUSY").
const reasonPrefix = "ERROR_REASON_"

// ReasonOf is the proto's ErrorReason of an ErrorInfo reason: ERROR_REASON_UNSPECIFIED for ""
// or a reason this client's proto does not know (a newer daemon's).
func ReasonOf(reason string) pb.ErrorReason {
	if reason == "" {
		return pb.ErrorReason_ERROR_REASON_UNSPECIFIED
	}
	return pb.ErrorReason(pb.ErrorReason_value[reasonPrefix+reason])
}

var reasonSentinels = map[pb.ErrorReason]error{
	pb.ErrorReason_ERROR_REASON_CHECKPOINT_NOT_FOUND:      ErrCheckpointNotFound,
	pb.ErrorReason_ERROR_REASON_APPROVAL_NOT_FOUND:        ErrApprovalNotFound,
	pb.ErrorReason_ERROR_REASON_TOOL_CALL_NOT_FOUND:       ErrToolCallNotFound,
	pb.ErrorReason_ERROR_REASON_SESSION_EXISTS:            ErrSessionExists,
	pb.ErrorReason_ERROR_REASON_EVENTS_OUT_OF_RANGE:       ErrEventsOutOfRange,
	pb.ErrorReason_ERROR_REASON_TOOL_CALL_NOT_PENDING:     ErrToolCallNotPending,
	pb.ErrorReason_ERROR_REASON_SESSION_AWAITING_APPROVAL: ErrSessionAwaitingApproval,
	pb.ErrorReason_ERROR_REASON_AGENT_DRIFT:               ErrAgentDrift,
	pb.ErrorReason_ERROR_REASON_RESUME_TOOL_MISSING:       ErrResumeToolMissing,
	pb.ErrorReason_ERROR_REASON_SESSION_BUSY:              ErrSessionBusy,
	pb.ErrorReason_ERROR_REASON_LEASE_LOST:                ErrLeaseLost,
	pb.ErrorReason_ERROR_REASON_PAYLOAD_TOO_LARGE:         ErrPayloadTooLarge,
	pb.ErrorReason_ERROR_REASON_STORE_FULL:                ErrStoreFull,
	pb.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE:         ErrStoreUnavailable,
	pb.ErrorReason_ERROR_REASON_PROVIDER_ERROR:            ErrProvider,
	pb.ErrorReason_ERROR_REASON_PROVIDER_REJECTED:         ErrProviderRejected,
	pb.ErrorReason_ERROR_REASON_SHUTTING_DOWN:             ErrShuttingDown,
	pb.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED:         ErrRequestIDReused,
	pb.ErrorReason_ERROR_REASON_SESSION_SLEEPING:          ErrSessionSleeping,
	pb.ErrorReason_ERROR_REASON_NOT_SLEEPING:              ErrNotSleeping,
	pb.ErrorReason_ERROR_REASON_SCHEDULE_EXISTS:           ErrScheduleExists,
	pb.ErrorReason_ERROR_REASON_SCHEDULE_NOT_FOUND:        ErrScheduleNotFound,
}

// Error is a failed RPC: the gRPC code and the ErrorInfo the daemon attached.
type Error struct {
	Code     codes.Code
	Reason   string // the ErrorInfo reason, "" when the server sent none
	Message  string
	Metadata map[string]string
	cause    error
	pushback string // the grpc-retry-pushback-ms trailer, "" when there was none
}

// pushbackKey is gRPC's trailer naming when to retry (milliseconds; negative: never).
const pushbackKey = "grpc-retry-pushback-ms"

// pushbackError carries a failed stream's grpc-retry-pushback-ms trailer to convert.
type pushbackError struct {
	err   error
	value string
}

func (p *pushbackError) Error() string { return p.err.Error() }
func (p *pushbackError) Unwrap() error { return p.err }

// Pushback is the grpc-retry-pushback-ms trailer of a failed stream: the wait the server
// asked for before a retry (negative: do not retry). ok is false when it sent none (or not
// a number).
func (e *Error) Pushback() (d time.Duration, ok bool) {
	if e.pushback == "" {
		return 0, false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(e.pushback), 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// ErrorReason is Reason as the proto's enum (ERROR_REASON_UNSPECIFIED when unknown or absent).
func (e *Error) ErrorReason() pb.ErrorReason { return ReasonOf(e.Reason) }

func (e *Error) Error() string {
	label := e.Reason
	if label == "" {
		label = e.Code.String()
	}
	if e.Message == "" {
		return "luosho: " + label
	}
	return fmt.Sprintf("luosho: %s: %s", label, e.Message)
}

// Unwrap returns the original gRPC error.
func (e *Error) Unwrap() error { return e.cause }

// Is makes errors.Is(err, ErrSessionBusy) and friends work (and errors.Is(err,
// ErrProvider) for a PROVIDER_REJECTED error, whose sentinel wraps ErrProvider).
func (e *Error) Is(target error) bool {
	if s, ok := reasonSentinels[ReasonOf(e.Reason)]; ok && errors.Is(s, target) {
		return true
	}
	switch target {
	case ErrInvalidArgument:
		return e.Code == codes.InvalidArgument
	case ErrUnavailable:
		return e.Code == codes.Unavailable
	}
	return false
}

// ApprovalID is the approval a SESSION_AWAITING_APPROVAL or APPROVAL_NOT_FOUND error names.
func (e *Error) ApprovalID() string { return e.Metadata["approval_id"] }

// WakeAt is when the sleeping session of a SESSION_SLEEPING error wakes (R86); ok is
// false when the error names no such time.
func (e *Error) WakeAt() (t time.Time, ok bool) {
	t, err := time.Parse(time.RFC3339Nano, e.Metadata["wake_at"])
	return t, err == nil
}

// SessionID is the session the error names, if any.
func (e *Error) SessionID() string { return e.Metadata["session_id"] }

// ProviderStatus is the HTTP status the provider answered a failed model call with
// ("400"; "" when there was none), from a PROVIDER_REJECTED or PROVIDER_ERROR error.
func (e *Error) ProviderStatus() string { return e.Metadata["status"] }

// ProviderMessage is the provider's error message (keys redacted, at most 500
// characters), from a PROVIDER_REJECTED or PROVIDER_ERROR error.
func (e *Error) ProviderMessage() string { return e.Metadata["provider_message"] }

// RetryAfter is the metadata's retry_after_s: the earliest the daemon will try again what
// failed (an UNAVAILABLE or RESOURCE_EXHAUSTED answer may carry it). ok is false when the
// error has none (or not a non-negative number of seconds).
func (e *Error) RetryAfter() (d time.Duration, ok bool) {
	v, found := e.Metadata["retry_after_s"]
	if !found {
		return 0, false
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || s < 0 {
		return 0, false
	}
	if s >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(s * float64(time.Second)), true
}

// GRPCStatus lets status.FromError see through the wrapper.
func (e *Error) GRPCStatus() *status.Status {
	if s, ok := status.FromError(e.cause); ok {
		return s
	}
	return status.New(e.Code, e.Message)
}

// convert turns a gRPC error into an *Error (context errors are returned as they are:
// a cancelled context is the caller's own doing).
func convert(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	out := &Error{Code: st.Code(), Message: st.Message(), Metadata: map[string]string{}, cause: err}
	var pushed *pushbackError
	if errors.As(err, &pushed) {
		out.pushback = pushed.value
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			out.Reason = info.GetReason()
			for k, v := range info.GetMetadata() {
				out.Metadata[k] = v
			}
			break
		}
	}
	return out
}
