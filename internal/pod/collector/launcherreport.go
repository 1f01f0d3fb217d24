package collector

import (
	"encoding/json"
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// decodeLauncherReport decodes the launcher's report, the payload of the frame that ended the runner-end FIFO's
// stream (podwire.DecodeFrame checked its length and digest). It is still read as hostile data: bounded in size
// (by the frame) and in its list.
func decodeLauncherReport(payload []byte) (*podwire.LauncherReport, error) {
	var r podwire.LauncherReport
	if err := json.Unmarshal(payload, &r); err != nil {
		return nil, fmt.Errorf("decode the launcher's report: %w", err)
	}
	if len(r.Cases) > podwire.MaxRecordedCaseFailures {
		r.Cases = r.Cases[:podwire.MaxRecordedCaseFailures]
	}
	r.Leftovers, r.Survivors = max(r.Leftovers, 0), max(r.Survivors, 0)
	return &r, nil
}
