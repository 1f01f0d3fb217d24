package results

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Merger builds one run's status section from results stored by several collections: the shards of a sharded
// run, and the results a resumed run carries from an earlier one. Cases are added from their stored chunks in any
// order; the section depends only on the set of results. Memory stays bounded by the status budget plus one
// float per judged case (for the median).
type Merger struct {
	index   map[string]int
	seen    []bool
	summary verdict.SummaryBuilder
	builder *Builder
	missing []indexedID
	tail    Tail
	stored  int
	// records sums the collections' kept records.
	records *evalsv1alpha1.RecordsStatus
	// trials, in a run with trials, decides each case over its trials (WithTrials); nil for one trial.
	trials *trialMerge
}

type indexedID struct {
	index int
	id    string
}

// NewMerger returns a Merger for a run whose requested case ids (ran and carried, in the run's order) are ids;
// the section it builds names configMaps and objects (the shards' bucket objects) as where every stored result
// is, and keeps within budgetBytes.
func NewMerger(ids, configMaps, objects []string, budgetBytes int64) *Merger {
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, dup := index[id]; !dup {
			index[id] = i
		}
	}
	return &Merger{
		index:   index,
		seen:    make([]bool, len(ids)),
		builder: NewBuilder(Options{BudgetBytes: budgetBytes, ConfigMaps: configMaps, Objects: objects, AlreadyStored: true}),
	}
}

// AddChunk adds every result line of one stored chunk (gzip'd JSONL). A result whose id the run did not request,
// or that was added already, is skipped: the first stored result of a case (with trials, of a case's trial) wins.
func (m *Merger) AddChunk(data []byte) error {
	return EachLine(data, m.AddLine)
}

// ShowChunk reads one stored chunk again, in a run with trials, once every chunk was added (AddChunk): each case
// shows one trial's result in the status (CaseTrials.Shown), which is known only once all its trials are in, so
// the chunks are read twice rather than every case's results kept. The chunks must be shown in the order they were
// added. It does nothing in a run of one trial.
func (m *Merger) ShowChunk(data []byte) error {
	if m.trials == nil {
		return nil
	}
	return EachLine(data, m.ShowLine)
}

// EachLine calls f with every result of a stored chunk (gzip'd JSONL), decoded, and its encoding (valid only
// during the call).
func EachLine(data []byte, f func(l *Line, raw []byte) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("open a result chunk: %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		raw := sc.Bytes()
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(raw, &l); err != nil {
			return fmt.Errorf("decode a stored result: %w", err)
		}
		if err := f(&l, raw); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && err != io.ErrUnexpectedEOF {
		return fmt.Errorf("read a result chunk: %w", err)
	}
	return nil
}

// Chunks splits result lines into the chunks of the named ConfigMaps (gzip'd JSONL, each within the ConfigMap
// limit), as the collector stores them; it fails when they do not all fit.
func Chunks(names []string, lines [][]byte) ([]Chunk, error) {
	w := newChunkWriter(names, podwire.MaxResultConfigMapBytes)
	for _, l := range lines {
		if err := w.add(l); err != nil {
			return nil, err
		}
	}
	chunks, err := w.finish()
	if err != nil {
		return nil, err
	}
	if w.dropped > 0 {
		return nil, fmt.Errorf("%d results do not fit %d ConfigMaps", w.dropped, len(names))
	}
	return chunks, nil
}

// AddLine adds one result; raw is its stored encoding.
func (m *Merger) AddLine(l *Line, raw []byte) error {
	if m.trials != nil {
		m.trials.add(m, l)
		return nil
	}
	i, ok := m.index[l.ID]
	if !ok || m.seen[i] {
		return nil
	}
	m.seen[i] = true
	m.stored++
	return m.add(i, l, raw)
}

func (m *Merger) add(i int, l *Line, raw []byte) error {
	m.summary.Add(l.CaseResult)
	if l.Missing {
		m.missing = append(m.missing, indexedID{index: i, id: l.ID})
	}
	return m.builder.Add(Case{Index: i, Status: l.Status(), Missing: l.Missing, Line: raw, Usage: l.Usage()})
}

// AddCollection adds what one collection's section says beyond its cases: its parse errors and unexpected ids
// (each parse error naming shard and trial, when they are not nil) and their counts.
func (m *Merger) AddCollection(s *Section, shard, trial *int32) {
	if s == nil {
		return
	}
	m.records = AddRecords(m.records, s.Records)
	if c := s.Cost; c != nil {
		m.tail.Budgets = append(m.tail.Budgets, c.BudgetsExceeded...)
	}
	if sum := s.Summary; sum != nil {
		m.tail.ParseErrorCount += int(sum.ParseErrors)
		m.tail.UnexpectedCount += int(sum.Unexpected)
	}
	for _, pe := range s.ParseErrors {
		if len(m.tail.ParseErrors) >= evalsv1alpha1.MaxStatusParseErrors {
			break
		}
		if shard != nil {
			pe.Shard = ptrTo(*shard)
		}
		if trial != nil {
			pe.Trial = ptrTo(*trial)
		}
		m.tail.ParseErrors = append(m.tail.ParseErrors, pe)
	}
	for _, id := range s.UnexpectedIDs {
		if len(m.tail.UnexpectedIDs) >= evalsv1alpha1.MaxStatusUnexpectedIDs {
			break
		}
		m.tail.UnexpectedIDs = append(m.tail.UnexpectedIDs, id)
	}
}

// Finish counts every requested case no stored result covers as missing, with the reason its collection gives
// (unrecorded: the case's index -> why no result was stored), names the shard of each missing id (shardOf: the
// case's index -> its shard, false for a case no shard ran), and builds the section, stamped at.
func (m *Merger) Finish(unrecorded func(index int) string, shardOf func(index int) (int32, bool), at metav1.Time) (*Section, error) {
	ids := make([]string, len(m.seen))
	for id, i := range m.index {
		ids[i] = id
	}
	if m.trials != nil {
		if err := m.trials.finish(m, ids); err != nil {
			return nil, err
		}
	}
	for i, seen := range m.seen {
		if seen {
			continue
		}
		r := verdict.MissingCase(ids[i])
		if why := unrecorded(i); why != "" {
			r.Error = why
		}
		if err := m.add(i, &Line{CaseResult: r}, nil); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(m.missing, func(a, b indexedID) int { return a.index - b.index })
	m.tail.MissingCount = len(m.missing)
	for _, mi := range m.missing {
		if len(m.tail.MissingIDs) >= evalsv1alpha1.MaxStatusMissingIDs {
			break
		}
		m.tail.MissingIDs = append(m.tail.MissingIDs, mi.id)
		var shard *int32
		if k, ok := shardOf(mi.index); ok {
			shard = &k
		}
		runs := m.tail.MissingIDShards
		if n := len(runs); n > 0 && equalShard(runs[n-1].Shard, shard) {
			runs[n-1].Count++
			continue
		}
		m.tail.MissingIDShards = append(runs, evalsv1alpha1.MissingIDRun{Shard: shard, Count: 1})
	}
	sum := m.summary.Summary()
	if m.trials != nil {
		// Every trial's judges count, not only the shown ones'.
		sum.ModelUsage = m.trials.judges
	}
	m.tail.Summary = SummaryStatus(sum, m.tail.ParseErrorCount, m.tail.UnexpectedCount)
	m.tail.Collection = evalsv1alpha1.CollectionStatus{CollectedAt: &at}
	out, err := m.builder.Finish(m.tail)
	if err != nil {
		return nil, err
	}
	s := out.Section
	// The merged run has no one collection: its collections' facts are per shard.
	s.Collection = nil
	s.Results.TotalCases = int32(m.stored)
	s.Records = m.records
	return &s, nil
}

// AddRecords returns a with b's counts added (a sharded run's shards' kept records); either may be nil.
func AddRecords(a, b *evalsv1alpha1.RecordsStatus) *evalsv1alpha1.RecordsStatus {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	a.Kept = clamp32(satAdd(int64(a.Kept), int64(b.Kept)))
	a.NotKept = clamp32(satAdd(int64(a.NotKept), int64(b.NotKept)))
	a.Bytes = satAdd(a.Bytes, b.Bytes)
	if a.Where == "" {
		a.Where = b.Where
	}
	return a
}

func ptrTo[T any](v T) *T { return &v }

func equalShard(a, b *int32) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}
