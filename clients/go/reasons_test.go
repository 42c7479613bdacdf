package luosho_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	luosho "github.com/luoshod/luoshod/clients/go"
	pb "github.com/luoshod/luoshod/clients/go/luoshov1"
)

// The client maps an ErrorInfo reason through the proto's ErrorReason enum: the wire string
// is the value's name without ERROR_REASON_.
func TestReasonOfFollowsTheEnum(t *testing.T) {
	for value, name := range pb.ErrorReason_name {
		if value == 0 {
			continue
		}
		reason := name[len("ERROR_REASON_"):]
		if got := luosho.ReasonOf(reason); int32(got) != value {
			t.Errorf("ReasonOf(%q) = %v, want %s", reason, got, name)
		}
	}
	if got := luosho.ReasonOf("A_NEWER_DAEMONS_REASON"); got != pb.ErrorReason_ERROR_REASON_UNSPECIFIED {
		t.Errorf("an unknown reason maps to %v", got)
	}
	if got := luosho.ReasonOf(""); got != pb.ErrorReason_ERROR_REASON_UNSPECIFIED {
		t.Errorf("no reason maps to %v", got)
	}
	busy := &luosho.Error{Code: codes.Aborted, Reason: "SESSION_BUSY"}
	if busy.ErrorReason() != pb.ErrorReason_ERROR_REASON_SESSION_BUSY || !errors.Is(busy, luosho.ErrSessionBusy) {
		t.Errorf("SESSION_BUSY: %v", busy.ErrorReason())
	}
	unknown := &luosho.Error{Code: codes.Aborted, Reason: "A_NEWER_DAEMONS_REASON"}
	if errors.Is(unknown, luosho.ErrSessionBusy) {
		t.Error("an unknown reason matched a sentinel")
	}
}
