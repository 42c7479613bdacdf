package luosho

// Retries without duplicates: every Execute, Resume and Resolve carries a request id, the
// same on each attempt, so the daemon applies it once however many times the client has
// to send it.
//
// A run retries, after a backoff, when its stream fails with UNAVAILABLE (the daemon
// restarting or draining, the network gone, a provider failure the daemon deems
// transient; at any point of the stream), or with another transport failure before any
// event of that attempt arrived. Every other answer of the daemon (PROVIDER_REJECTED among
// them) is the run's failure. The wait before a retry is the policy's backoff, or the
// retry_after_s the failed attempt's ErrorInfo names when that is longer. After its
// backoff a retry waits for the connection to be READY (connecting it), at most
// MaxBackoff, before it opens the next attempt. What the earlier attempts delivered is not
// delivered again: the retried stream resumes the run (the daemon runs what is left) or
// replays it (events already seen are skipped).
//
// MaxAttempts counts the attempts in a row without progress: an attempt makes progress
// when it delivers, for the first time and not replayed, a model.turn or a tool.result
// event (the lead's or a sub-agent's). A resumed run always sends run.start and step.start
// again; those do not count, or a model call that fails the same way on every attempt
// would be retried forever.

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	mrand "math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
)

// RetryPolicy is how a run retries a stream the daemon or the network broke.
//
// MaxAttempts bounds the attempts in a row that make no progress (1: never retry). An
// attempt makes progress when it delivers a model.turn or tool.result event never
// delivered before (not replayed, its seq above every seq already delivered); such an
// attempt starts the count again, so a run that keeps moving keeps going however often
// its stream breaks. Other new events (run.start, step.start, tool.call, text.delta, …)
// are delivered but do not reset the count. The n-th retry in a row waits
// InitialBackoff * Multiplier^(n-1), at most MaxBackoff, each spread by ±Jitter (a
// fraction) so that many clients do not come back at once; or longer, when the failed
// attempt's error names a retry_after_s (see Delay). After MaxAttempts attempts without
// progress the run returns the last attempt's error.
//
// An attempt the daemon's admission refused before the run started (RESOURCE_EXHAUSTED
// with reason DAEMON_OVERLOADED or TOO_MANY_RUNS, or with gRPC's grpc-retry-pushback-ms
// trailer) is not counted in MaxAttempts: the run comes back after the wait the daemon
// named (the trailer's when present, else retry_after_s, else the backoff), lengthened by
// up to Jitter of it so that a refused burst comes back spread, sending the same request
// (its request id too). OverloadAttempts bounds those attempts in all (1: a refusal is the
// run's failure), OverloadMaxWait the time from the first refusal, and the run's context
// deadline the rest: a wait that would end past either gives up at once with the refusal.
// A negative pushback (the server asking not to retry) is final.
//
// A zero field takes its default (so RetryPolicy{} is DefaultRetryPolicy()); a negative
// Jitter means none. The default rides out a daemon that stays away some 30 seconds.
type RetryPolicy struct {
	MaxAttempts      int           // default 20
	InitialBackoff   time.Duration // default 100ms
	MaxBackoff       time.Duration // default 2s
	Multiplier       float64       // default 2
	Jitter           float64       // default 0.2
	OverloadAttempts int           // default 30
	OverloadMaxWait  time.Duration // default 5m
}

// NoRetry is one attempt, its failure returned.
var NoRetry = RetryPolicy{MaxAttempts: 1, OverloadAttempts: 1}

// DefaultRetryPolicy is what a Client uses unless told otherwise.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 20, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Multiplier: 2, Jitter: 0.2,
		OverloadAttempts: 30, OverloadMaxWait: 5 * time.Minute}
}

// admissionReasons are the daemon's admission refusing a run before it starts, with a
// retry_after_s: its event loop too busy for one more run, or its count of runs full.
var admissionReasons = map[string]bool{"DAEMON_OVERLOADED": true, "TOO_MANY_RUNS": true}

// refusals counts a run's attempts refused by the daemon's admission, and since when.
type refusals struct {
	count int
	since time.Time
}

// RefusedByAdmission reports whether err refused a run before it started (eventsInAttempt
// 0), saying when to come back: the daemon's admission (DAEMON_OVERLOADED, TOO_MANY_RUNS)
// or a server's grpc-retry-pushback-ms trailer on RESOURCE_EXHAUSTED.
func RefusedByAdmission(err error, eventsInAttempt int) bool {
	var e *Error
	if eventsInAttempt > 0 || !errors.As(err, &e) || e.Code != codes.ResourceExhausted {
		return false
	}
	_, pushed := e.Pushback()
	return admissionReasons[e.Reason] || pushed
}

// OverloadWait is how long to wait before trying again a run refused by the daemon's
// admission with err, the refused-th refusal of the run (from 1): the pushback trailer's
// wait, else retry_after_s, else Backoff(refused), lengthened by up to Jitter of it. ok
// is false when the run gives up: at OverloadAttempts, or on a negative pushback.
func (p RetryPolicy) OverloadWait(err error, refused int) (d time.Duration, ok bool) {
	p = p.normalized()
	if refused >= p.OverloadAttempts {
		return 0, false
	}
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	hint, pushed := e.Pushback()
	if pushed && hint < 0 {
		return 0, false
	}
	if !pushed {
		if after, found := e.RetryAfter(); found && after > 0 {
			hint = after
		} else {
			hint = p.Backoff(refused)
		}
	}
	return time.Duration(float64(hint) * (1 + p.Jitter*mrand.Float64())), true
}

// overloadWait counts a refusal of the run in r and returns the wait before the next
// attempt; ok is false when the run gives up (see OverloadWait, OverloadMaxWait and the
// context's deadline).
func (p RetryPolicy) overloadWait(ctx context.Context, err error, r *refusals) (time.Duration, bool) {
	p = p.normalized()
	now := time.Now()
	if r.count == 0 {
		r.since = now
	}
	r.count++
	d, ok := p.OverloadWait(err, r.count)
	if !ok || now.Add(d).Sub(r.since) > p.OverloadMaxWait {
		return 0, false
	}
	if deadline, has := ctx.Deadline(); has && now.Add(d).After(deadline) {
		return 0, false
	}
	return d, true
}

// normalized fills the zero fields with the defaults.
func (p RetryPolicy) normalized() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = d.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.Multiplier < 1 {
		p.Multiplier = d.Multiplier
	}
	if p.OverloadAttempts <= 0 {
		p.OverloadAttempts = d.OverloadAttempts
	}
	if p.OverloadMaxWait <= 0 {
		p.OverloadMaxWait = d.OverloadMaxWait
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = d.Jitter
	case p.Jitter < 0:
		p.Jitter = 0
	case p.Jitter > 1:
		p.Jitter = 1
	}
	return p
}

// ShouldRetry reports whether an attempt that failed with err after eventsInAttempt events
// is tried again, attempt being its number in the current row of attempts without
// progress (from 1). UNAVAILABLE is retried at any point; UNKNOWN or INTERNAL without an
// ErrorInfo reason (a failure of the connection rather than an answer of the daemon, which
// always gives one) only before the attempt's first event, when the request may not have
// arrived. PROVIDER_REJECTED (a model call no retry can fix), every other answer of the
// daemon and a context error (the caller's own doing) never are.
func (p RetryPolicy) ShouldRetry(err error, attempt, eventsInAttempt int) bool {
	p = p.normalized()
	var e *Error
	if attempt >= p.MaxAttempts || !errors.As(err, &e) || errors.Is(e, ErrProviderRejected) {
		return false
	}
	if e.Code == codes.Unavailable {
		return true
	}
	return eventsInAttempt == 0 && e.Reason == "" && (e.Code == codes.Unknown || e.Code == codes.Internal)
}

// Backoff is how long to wait after the attempt-th failed attempt in a row (from 1).
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	p = p.normalized()
	base := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(max(attempt, 1)-1))
	base = min(base, float64(p.MaxBackoff))
	return time.Duration(max(0, base*(1+p.Jitter*(2*mrand.Float64()-1))))
}

// Delay is how long to wait before retrying the attempt-th failed attempt in a row (from
// 1) that failed with err: Backoff(attempt), or the retry_after_s of err's ErrorInfo
// metadata (the earliest the daemon will try again, see Error.RetryAfter) when longer.
func (p RetryPolicy) Delay(attempt int, err error) time.Duration {
	d := p.Backoff(attempt)
	var e *Error
	if errors.As(err, &e) {
		if after, ok := e.RetryAfter(); ok && after > d {
			d = after
		}
	}
	return d
}

// progress reports whether ev, delivered for the first time, moves the run: a model turn
// or a tool result recorded (the lead's or a sub-agent's), not replayed.
func progress(ev *Event) bool {
	if ev.GetReplayed() {
		return false
	}
	switch ev.GetType() {
	case "model.turn", "tool.result":
		return true
	}
	return false
}

// DialOption sets a connection's reconnect backoff to suit p: grpc-go's own (1s
// growing to 2 minutes) would keep a restarted daemon unreachable for longer than the
// retries wait, each attempt failing at once without trying to connect.
func (p RetryPolicy) DialOption() grpc.DialOption {
	p = p.normalized()
	most := max(100*time.Millisecond, p.MaxBackoff)
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff: backoff.Config{
			BaseDelay:  min(100*time.Millisecond, most),
			Multiplier: 1.6,
			Jitter:     0.2,
			MaxDelay:   most,
		},
		MinConnectTimeout: 20 * time.Second,
	})
}

// connector is what a retry needs of a connection to wait for it: *grpc.ClientConn.
type connector interface {
	Connect()
	GetState() connectivity.State
	WaitForStateChange(ctx context.Context, from connectivity.State) bool
}

// waitReady connects conn (at once: its reconnect backoff is reset) and waits until it is READY, for at most limit (or until ctx
// ends). While grpc-go's connection is in TRANSIENT_FAILURE every RPC on it fails at once
// with UNAVAILABLE ("connection refused"), however soon the daemon is back: an attempt
// opened then would be lost. Waiting here (rather than WaitForReady on the stream, whose
// deadline would also bound the run) only delays the attempt; when limit passes, the
// attempt is opened anyway and fails or not as the connection is.
func waitReady(ctx context.Context, conn connector, limit time.Duration) {
	if conn == nil {
		return
	}
	if r, ok := conn.(interface{ ResetConnectBackoff() }); ok {
		r.ResetConnectBackoff() // try now, not when grpc-go's own backoff ends
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		state := conn.GetState()
		switch state {
		case connectivity.Ready, connectivity.Shutdown:
			return
		case connectivity.Idle:
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, state) {
			return // limit reached, or ctx ended
		}
	}
}

// NewRequestID returns a UUIDv7 (RFC 9562): time-ordered, so the ids of a session sort by
// when they were made, and random enough that two clients never pick the same one.
func NewRequestID() string {
	var u [16]byte
	_, _ = rand.Read(u[6:]) // crypto/rand.Read never fails
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(u[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(u[2:6], uint32(ms))
	u[6] = 0x70 | u[6]&0x0f // version 7
	u[8] = 0x80 | u[8]&0x3f // variant 10
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(s[:])
}
