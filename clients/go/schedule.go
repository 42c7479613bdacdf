package luosho

import (
	"context"
	"errors"
	"fmt"
	"time"

	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// ScheduleSpec is what a schedule runs and when (docs/reference/rules.md R87): Agent with
// Input (a user message) at each fire, by Cron (a five-field expression read in TimeZone,
// an IANA name; "": UTC) or every Interval (at least a second) — exactly one of the two.
type ScheduleSpec struct {
	Name     string
	Cron     string
	TimeZone string
	Interval time.Duration
	Agent    *Agent
	Input    string
	// Messages are more input, after Input.
	Messages []*pb.Message
	// Overlap: a fire while the previous fire's run is active is skipped (UNSPECIFIED:
	// SKIP), queued on the session (ENQUEUE, needs session ONE) or run alongside (ALLOW).
	Overlap pb.ScheduleOverlap
	// CatchUp: the fires missed while no daemon ran: the latest runs (UNSPECIFIED: LATEST),
	// ALL of them, or NONE.
	CatchUp pb.ScheduleCatchUp
	// Session: a new session "schedule:NAME:FIRE" each fire (UNSPECIFIED: EACH_FIRE), or
	// ONE session "schedule:NAME".
	Session pb.ScheduleSession
}

// errScheduleWhen is returned for a ScheduleSpec with both or neither of Cron and Interval.
var errScheduleWhen = errors.New("luosho: a schedule needs either Cron or Interval")

// Proto returns the ScheduleSpec message of the spec.
func (s ScheduleSpec) Proto() (*pb.ScheduleSpec, error) {
	if (s.Cron == "") == (s.Interval == 0) {
		return nil, errScheduleWhen
	}
	agent, err := s.Agent.Proto()
	if err != nil {
		return nil, err
	}
	out := &pb.ScheduleSpec{
		Name: s.Name, Agent: agent, Overlap: s.Overlap, CatchUp: s.CatchUp, Session: s.Session,
	}
	if s.Input != "" {
		out.Input = append(out.Input, UserMessage(s.Input))
	}
	out.Input = append(out.Input, s.Messages...)
	if s.Cron != "" {
		out.When = &pb.ScheduleSpec_Cron{Cron: &pb.ScheduleCron{Expression: s.Cron, TimeZone: s.TimeZone}}
	} else {
		out.When = &pb.ScheduleSpec_IntervalMs{IntervalMs: s.Interval.Milliseconds()}
	}
	return out, nil
}

// CreateSchedule makes a new schedule (R87); the daemon runs it from then on. It fails
// with ErrInvalidArgument (reason INVALID_SCHEDULE, UNKNOWN_TIME_ZONE) or
// ErrScheduleExists.
func (c *Client) CreateSchedule(ctx context.Context, spec ScheduleSpec) (*pb.Schedule, error) {
	s, err := spec.Proto()
	if err != nil {
		return nil, err
	}
	r, err := c.rpc.CreateSchedule(ctx, &pb.CreateScheduleRequest{Spec: s})
	return r.GetSchedule(), convert(ctx, err)
}

// Schedules returns every schedule, ordered by name.
func (c *Client) Schedules(ctx context.Context) ([]*pb.Schedule, error) {
	r, err := c.rpc.ListSchedules(ctx, &pb.ListSchedulesRequest{})
	return r.GetSchedules(), convert(ctx, err)
}

// Schedule returns the schedule of that name; ErrScheduleNotFound when there is none.
func (c *Client) Schedule(ctx context.Context, name string) (*pb.Schedule, error) {
	all, err := c.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.GetSpec().GetName() == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: no schedule named %q", ErrScheduleNotFound, name)
}

// PauseSchedule stops the schedule's fires until ResumeSchedule (fires due meanwhile do not
// run).
func (c *Client) PauseSchedule(ctx context.Context, name string) (*pb.Schedule, error) {
	r, err := c.rpc.PauseSchedule(ctx, &pb.PauseScheduleRequest{Name: name})
	return r.GetSchedule(), convert(ctx, err)
}

// ResumeSchedule lets a paused schedule fire again, from its next time after now.
func (c *Client) ResumeSchedule(ctx context.Context, name string) (*pb.Schedule, error) {
	r, err := c.rpc.ResumeSchedule(ctx, &pb.ResumeScheduleRequest{Name: name})
	return r.GetSchedule(), convert(ctx, err)
}

// DeleteSchedule deletes the schedule (the runs it started go on); ErrScheduleNotFound
// when there is none.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	_, err := c.rpc.DeleteSchedule(ctx, &pb.DeleteScheduleRequest{Name: name})
	return convert(ctx, err)
}

// TriggerSchedule fires the schedule once now: the fire's session and request id (follow
// it with Watch).
func (c *Client) TriggerSchedule(ctx context.Context, name string) (*pb.TriggerScheduleResponse, error) {
	r, err := c.rpc.TriggerSchedule(ctx, &pb.TriggerScheduleRequest{Name: name})
	return r, convert(ctx, err)
}
