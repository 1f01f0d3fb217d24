package podwire

import (
	"fmt"
	"io"
)

// Logf writes one progress or diagnostic line to w, the container's stderr in production. A failed write is
// deliberately ignored: these lines are for people reading `kubectl logs`, nothing else in the pod depends on
// them, and a broken stderr leaves no other channel to report the failure on. Results, the acknowledgement and
// the termination message are written through checked paths instead.
func Logf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
