package luosho

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

var reasonSentinels = map[string]error{
	"CHECKPOINT_NOT_FOUND":      ErrCheckpointNotFound,
	"APPROVAL_NOT_FOUND":        ErrApprovalNotFound,
	"TOOL_CALL_NOT_FOUND":       ErrToolCallNotFound,
	"SESSION_EXISTS":            ErrSessionExists,
	"EVENTS_OUT_OF_RANGE":       ErrEventsOutOfRange,
	"TOOL_CALL_NOT_PENDING":     ErrToolCallNotPending,
	"SESSION_AWAITING_APPROVAL": ErrSessionAwaitingApproval,
	"AGENT_DRIFT":               ErrAgentDrift,
	"RESUME_TOOL_MISSING":       ErrResumeToolMissing,
	"SESSION_BUSY":              ErrSessionBusy,
	"LEASE_LOST":                ErrLeaseLost,
	"PAYLOAD_TOO_LARGE":         ErrPayloadTooLarge,
	"STORE_FULL":                ErrStoreFull,
	"STORE_UNAVAILABLE":         ErrStoreUnavailable,
	"PROVIDER_ERROR":            ErrProvider,
	"PROVIDER_REJECTED":         ErrProviderRejected,
	"SHUTTING_DOWN":             ErrShuttingDown,
	"REQUEST_ID_REUSED":         ErrRequestIDReused,
}

// Error is a failed RPC: the gRPC code and the ErrorInfo the daemon attached.
type Error struct {
	Code     codes.Code
	Reason   string // the ErrorInfo reason, "" when the server sent none
	Message  string
	Metadata map[string]string
	cause    error
}

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
	if s, ok := reasonSentinels[e.Reason]; ok && errors.Is(s, target) {
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
