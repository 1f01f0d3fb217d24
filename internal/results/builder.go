package results

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync/atomic"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Case is one judged case handed to the Builder.
type Case struct {
	// Index is the case's position among the requested ids; status lists cases in this order within each group.
	Index int
	// Status is the case as status.cases shows it. The Builder cuts its strings to the API bounds. For a case that
	// MayShow reported it cannot show, only Status.Verdict is read.
	Status evalsv1alpha1.CaseResult
	// Missing marks a requested case without a record: it is stored in the ConfigMaps but listed in
	// status.missingIds rather than status.cases.
	Missing bool
	// Line is the full result, one JSON object without a trailing newline, stored in the result ConfigMaps. The
	// Builder keeps nothing of it once Add returns.
	Line []byte
	// Usage is what the case's result says was spent on it; the Builder sums it into the section's cost.
	Usage CaseUsage
}

// Tail is everything about the run that is not a case.
type Tail struct {
	// Summary counts the judged results.
	Summary evalsv1alpha1.RunSummary
	// MissingIDs are the requested ids without a record, in request order (possibly already bounded);
	// MissingCount counts all of them.
	MissingIDs   []string
	MissingCount int
	// MissingIDShards names the shard of each of MissingIDs, as runs (a merged run's; may cover more ids than the
	// section lists: it is cut to them).
	MissingIDShards []evalsv1alpha1.MissingIDRun
	// ParseErrors are the output's line errors (possibly bounded); ParseErrorCount counts all of them.
	ParseErrors     []evalsv1alpha1.ParseError
	ParseErrorCount int
	// UnexpectedIDs are ids nobody requested (possibly bounded); UnexpectedCount counts all of them.
	UnexpectedIDs   []string
	UnexpectedCount int
	// Collection is the collector's facts; CollectedAt also stamps the ResultsTruncated condition.
	Collection evalsv1alpha1.CollectionStatus
	// Budgets are the budgets the collection reached (status.cost.budgetsExceeded).
	Budgets []evalsv1alpha1.BudgetKind
	// Trials is status.trials (a merged run with trials), its flaky ids bounded by their API maximum; nil otherwise.
	Trials *evalsv1alpha1.TrialsStatus
}

// Options configure a Builder.
type Options struct {
	// BudgetBytes bounds the JSON encoding of the Section (default evalsv1alpha1.DefaultStatusBudgetBytes).
	BudgetBytes int64
	// ConfigMaps are the result ConfigMap names, in order; chunk i goes to ConfigMaps[i].
	ConfigMaps []string
	// Objects are the bucket objects (s3:// URIs) that hold the results instead of ConfigMaps: the collector's one
	// object takes every result as one chunk, unbounded by a ConfigMap's size; the manager merging shards names
	// every shard's object (with AlreadyStored). The section names them as results.objects.
	Objects []string
	// MaxChunkBytes bounds each chunk (default podwire.MaxResultConfigMapBytes; unbounded for Objects).
	MaxChunkBytes int
	// NoCases leaves every case out of the section (counted as omitted): a shard's section, whose cases the
	// manager reads from where they are stored.
	NoCases bool
	// AlreadyStored says the cases' Lines are stored already (the manager merging shards): the Builder makes no
	// chunks, and the section names ConfigMaps as where every case result is.
	AlreadyStored bool
}

// Output is what the collector persists.
type Output struct {
	// Section is the status results section, within the budget.
	Section Section
	// Chunks are the non-empty result chunks, in ConfigMap order. ConfigMaps without a chunk hold no results.
	Chunks []Chunk
	// StoredCases is the number of case results in Chunks; DroppedCases the number that fit no ConfigMap.
	StoredCases  int
	DroppedCases int
}

// Builder accumulates judged cases as they stream and builds the Output. Memory stays bounded by the status
// budget plus the result chunks, whatever the number of cases.
type Builder struct {
	opts    Options
	failing candidates
	passing candidates
	chunks  *chunkWriter
	cases   int
	cost    CostSum
}

// NewBuilder returns a Builder.
func NewBuilder(opts Options) *Builder {
	if opts.BudgetBytes <= 0 {
		opts.BudgetBytes = evalsv1alpha1.DefaultStatusBudgetBytes
	}
	switch {
	case len(opts.Objects) > 0 && !opts.AlreadyStored:
		opts.ConfigMaps, opts.MaxChunkBytes = nil, math.MaxInt
	case opts.MaxChunkBytes <= 0:
		opts.MaxChunkBytes = podwire.MaxResultConfigMapBytes
	}
	if len(opts.ConfigMaps) > podwire.MaxResultConfigMaps && !opts.AlreadyStored {
		opts.ConfigMaps = opts.ConfigMaps[:podwire.MaxResultConfigMaps]
	}
	b := &Builder{
		opts:    opts,
		failing: candidates{limit: opts.BudgetBytes, keep: !opts.NoCases},
		passing: candidates{limit: opts.BudgetBytes, keep: !opts.NoCases},
	}
	if !opts.AlreadyStored {
		dest := opts.ConfigMaps
		if len(opts.Objects) > 0 {
			dest = opts.Objects
		}
		b.chunks = newChunkWriter(dest, opts.MaxChunkBytes)
	}
	return b
}

// MayShow reports whether the section may still show the case at index with that verdict. Once it is false for an
// index, it stays false for it and for every higher index of the same group (passing or not), so a caller that
// gets false may leave the case's Status empty but for its Verdict: Add then only counts it. MayShow is the one
// method safe to call concurrently with Add (the collector's workers ask it before building a case's status).
func (b *Builder) MayShow(index int, verdict evalsv1alpha1.Verdict) bool {
	if verdict == evalsv1alpha1.VerdictPass {
		return b.passing.mayTake(index)
	}
	return b.failing.mayTake(index)
}

// AddUsage adds what was spent on a result that is not a case of its own (a trial of a case the merge of a run
// with trials adds once) to the section's cost.
func (b *Builder) AddUsage(u CaseUsage) { b.cost.Add(u) }

// Add takes one judged case. Cases may come in any order; the output depends only on the set of cases and the
// order of their Lines (which is the order of the ConfigMap lines).
func (b *Builder) Add(c Case) error {
	b.cases++
	b.cost.Add(c.Usage)
	if b.chunks != nil {
		if err := b.chunks.add(c.Line); err != nil {
			return err
		}
	}
	if c.Missing {
		return nil
	}
	if c.Status.Verdict == evalsv1alpha1.VerdictPass {
		return b.passing.offer(c)
	}
	return b.failing.offer(c)
}

// Finish builds the Output. The section holds, in this order of importance: the summary and collection facts,
// non-passing cases, passing cases, then missing ids, parse errors and unexpected ids. Cases may use at most the
// budget left after reserving room for the three lists (at most a quarter of the budget); each list is a prefix
// bounded by its API maximum; every omission is counted in Results and flagged with the ResultsTruncated
// condition.
func (b *Builder) Finish(t Tail) (*Output, error) {
	out := &Output{StoredCases: b.cases}
	configMaps, objects := b.opts.ConfigMaps, b.opts.Objects
	if b.chunks != nil {
		chunks, err := b.chunks.finish()
		if err != nil {
			return nil, err
		}
		out = &Output{Chunks: chunks, StoredCases: b.chunks.stored, DroppedCases: b.chunks.dropped}
		names := make([]string, len(chunks))
		for i, c := range chunks {
			names[i] = c.Destination
		}
		if len(objects) > 0 {
			objects = names
		} else {
			configMaps = names
		}
	}

	summary := t.Summary
	collection := t.Collection
	// Every text of the section that may carry the runner's bytes is escaped (textbound.Printable) as it is cut.
	collection.Message = textbound.PrintableHead(collection.Message, MaxCollectionMessageBytes)
	if l := collection.Launcher; l != nil {
		l = l.DeepCopy()
		l.StderrTail = textbound.PrintableTail(l.StderrTail, MaxStderrTailBytes)
		collection.Launcher = l
	}
	ref := &evalsv1alpha1.ResultsReference{
		TotalCases: int32(out.StoredCases),
	}
	// The locations are what the section cannot do without; past an eighth of the budget they share a prefix.
	if len(configMaps) > 0 {
		ref.ConfigMapsPrefix, ref.ConfigMaps = shortened(configMaps, b.opts.BudgetBytes/8)
		ref.Key = podwire.ResultsKey
	}
	if len(objects) > 0 {
		ref.ObjectsPrefix, ref.Objects = shortened(objects, b.opts.BudgetBytes/8)
	}
	if len(configMaps)+len(objects) > 0 {
		ref.Format = podwire.ResultsFormat
	}
	b.cost.AddBudgets(t.Budgets...)
	s := Section{Summary: &summary, Results: ref, Collection: &collection, Cost: b.cost.Status(), Trials: t.Trials.DeepCopy()}

	failing := b.failing.sorted()
	passing := b.passing.sorted()
	missing := capList(t.MissingIDs, evalsv1alpha1.MaxStatusMissingIDs)
	parseErrors := make([]evalsv1alpha1.ParseError, 0, min(len(t.ParseErrors), evalsv1alpha1.MaxStatusParseErrors))
	for _, pe := range capList(t.ParseErrors, evalsv1alpha1.MaxStatusParseErrors) {
		pe.Excerpt = textbound.PrintableHead(pe.Excerpt, MaxParseErrorExcerptBytes)
		pe.Message = textbound.PrintableHead(pe.Message, MaxParseErrorMessageBytes)
		parseErrors = append(parseErrors, pe)
	}
	unexpected := make([]string, 0, min(len(t.UnexpectedIDs), evalsv1alpha1.MaxStatusUnexpectedIDs))
	for _, id := range capList(t.UnexpectedIDs, evalsv1alpha1.MaxStatusUnexpectedIDs) {
		unexpected = append(unexpected, textbound.PrintableHead(id, MaxCaseIDBytes))
	}

	// Fixed part: everything but the lists, with the largest counts it can carry and the condition; the missing
	// ids' shards at their longest.
	s.Conditions = []metav1.Condition{truncatedCondition(true, "", collection.CollectedAt)}
	s.MissingIDShards = cutRuns(t.MissingIDShards, len(missing))
	fixed := jsonSize(s) + 2*len(`,"cases":[],"missingIds":[],"parseErrors":[],"unexpectedIds":[]`) + 64 + 512
	budget := b.opts.BudgetBytes - int64(fixed)

	listSizes := listSize(missing) + listSize(parseErrors) + listSize(unexpected)
	reserve := min(listSizes, b.opts.BudgetBytes/4)

	if b.opts.NoCases {
		reserve = budget
	}
	caseRoom := budget - reserve
	s.Cases, caseRoom = fill(failing, caseRoom, evalsv1alpha1.MaxStatusCases)
	var more []evalsv1alpha1.CaseResult
	more, caseRoom = fill(passing, caseRoom, evalsv1alpha1.MaxStatusCases-len(s.Cases))
	s.Cases = append(s.Cases, more...)
	room := caseRoom + reserve
	s.MissingIDs, room = fillList(missing, room)
	s.ParseErrors, room = fillList(parseErrors, room)
	s.UnexpectedIDs, _ = fillList(unexpected, room)

	judged := b.failing.count + b.passing.count
	ref.OmittedCases = int32(judged - len(s.Cases))
	ref.OmittedMissingIDs = int32(max(t.MissingCount, len(t.MissingIDs)) - len(s.MissingIDs))
	ref.OmittedParseErrors = int32(max(t.ParseErrorCount, len(t.ParseErrors)) - len(s.ParseErrors))
	ref.OmittedUnexpectedIDs = int32(max(t.UnexpectedCount, len(t.UnexpectedIDs)) - len(s.UnexpectedIDs))

	// The estimate above is conservative; verify and, should it ever be short, drop the least important items.
	for {
		s.MissingIDShards = cutRuns(t.MissingIDShards, len(s.MissingIDs))
		truncated := s.Truncated() || out.DroppedCases > 0
		s.Conditions = []metav1.Condition{truncatedCondition(truncated, truncationMessage(ref, out.DroppedCases), collection.CollectedAt)}
		if int64(jsonSize(s)) <= b.opts.BudgetBytes {
			break
		}
		if !dropLast(&s) {
			return nil, fmt.Errorf("the status summary alone is %d bytes, over the %d-byte budget", jsonSize(s), b.opts.BudgetBytes)
		}
	}
	out.Section = s
	return out, nil
}

// cutRuns is the prefix of runs that covers the first n ids.
func cutRuns(runs []evalsv1alpha1.MissingIDRun, n int) []evalsv1alpha1.MissingIDRun {
	var out []evalsv1alpha1.MissingIDRun
	for _, r := range runs {
		if n <= 0 {
			break
		}
		r.Count = min(r.Count, int32(n))
		n -= int(r.Count)
		out = append(out, r)
	}
	return out
}

// dropLast removes the least important item of the section and counts it. It returns false when nothing is left
// to remove.
func dropLast(s *Section) bool {
	r := s.Results
	switch {
	case len(s.UnexpectedIDs) > 0:
		s.UnexpectedIDs = s.UnexpectedIDs[:len(s.UnexpectedIDs)-1]
		r.OmittedUnexpectedIDs++
	case len(s.ParseErrors) > 0:
		s.ParseErrors = s.ParseErrors[:len(s.ParseErrors)-1]
		r.OmittedParseErrors++
	case s.Trials != nil && len(s.Trials.Flaky) > 0:
		// trials.flakyCases counts them all.
		s.Trials.Flaky = s.Trials.Flaky[:len(s.Trials.Flaky)-1]
	case len(s.MissingIDs) > 0:
		s.MissingIDs = s.MissingIDs[:len(s.MissingIDs)-1]
		r.OmittedMissingIDs++
	case len(s.Cases) > 0:
		s.Cases = s.Cases[:len(s.Cases)-1]
		r.OmittedCases++
	default:
		return false
	}
	return true
}

func truncationMessage(r *evalsv1alpha1.ResultsReference, dropped int) string {
	if r.OmittedCases == 0 && r.OmittedMissingIDs == 0 && r.OmittedParseErrors == 0 && r.OmittedUnexpectedIDs == 0 && dropped == 0 {
		return "Every result is in the status"
	}
	msg := fmt.Sprintf("The status budget left out %d cases, %d missing ids, %d parse errors and %d unexpected ids",
		r.OmittedCases, r.OmittedMissingIDs, r.OmittedParseErrors, r.OmittedUnexpectedIDs)
	switch {
	case dropped > 0:
		msg += fmt.Sprintf("; %d case results did not fit the %d result ConfigMaps and were not stored", dropped, len(r.ConfigMaps))
	case len(r.ConfigMaps) > 0 && len(r.Objects) > 0:
		msg += "; every case result is in the result ConfigMaps and bucket objects"
	case len(r.Objects) > 0:
		msg += "; every case result is in the bucket objects"
	case len(r.ConfigMaps) > 0:
		msg += "; every case result is in the result ConfigMaps"
	}
	return msg
}

// truncatedCondition is the ResultsTruncated condition. Its transition time is the collection time, so a re-run
// of the same collection writes the same condition.
func truncatedCondition(truncated bool, msg string, at *metav1.Time) metav1.Condition {
	c := metav1.Condition{
		Type:    evalsv1alpha1.ConditionResultsTruncated,
		Status:  metav1.ConditionFalse,
		Reason:  evalsv1alpha1.ReasonAllResultsInStatus,
		Message: msg,
	}
	if truncated {
		c.Status = metav1.ConditionTrue
		c.Reason = evalsv1alpha1.ReasonStatusBudgetExceeded
	}
	if at != nil {
		c.LastTransitionTime = *at
	}
	return c
}

// TruncatedCondition returns the section's ResultsTruncated condition, or nil.
func (s *Section) TruncatedCondition() *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, evalsv1alpha1.ConditionResultsTruncated)
}

func capList[T any](l []T, n int) []T {
	if len(l) > n {
		return l[:n]
	}
	return l
}

func jsonSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		// The section holds only plain data; Marshal cannot fail on it.
		panic(fmt.Sprintf("encode status section: %v", err))
	}
	return len(data)
}

func listSize[T any](l []T) int64 {
	var n int64
	for _, v := range l {
		n += int64(jsonSize(v)) + 1
	}
	return n
}

// fill takes the prefix of cs that fits room bytes and n items.
func fill(cs []sized, room int64, n int) ([]evalsv1alpha1.CaseResult, int64) {
	var out []evalsv1alpha1.CaseResult
	for _, c := range cs {
		if len(out) >= n || int64(c.size) > room {
			break
		}
		out = append(out, c.status)
		room -= int64(c.size)
	}
	return out, room
}

func fillList[T any](l []T, room int64) ([]T, int64) {
	for i, v := range l {
		sz := int64(jsonSize(v)) + 1
		if sz > room {
			return l[:i], room
		}
		room -= sz
	}
	return l, room
}

// sized is a case status with the size of its JSON encoding (plus a separator).
type sized struct {
	index  int
	size   int
	status evalsv1alpha1.CaseResult
}

// candidates keeps the lowest-index cases of one group whose encodings fit limit bytes: a max-heap on index.
// Once a case is evicted, no case with a higher index can enter (the cutoff), so the kept set is always a prefix
// in index order and cases past the cutoff cost nothing to reject. Without keep (a section without cases), it
// only counts.
type candidates struct {
	limit int64
	keep  bool
	bytes int64
	// cutoff is one more than the lowest index evicted (0: none yet); it only ever decreases, and is read by
	// mayTake on other goroutines.
	cutoff atomic.Int64
	count  int // every case offered
	h      sizedHeap
}

// mayTake reports whether a case at index could still be kept; safe for concurrent use with offer.
func (c *candidates) mayTake(index int) bool {
	cut := c.cutoff.Load()
	return c.keep && (cut == 0 || int64(index) < cut-1)
}

func (c *candidates) offer(cs Case) error {
	c.count++
	if !c.mayTake(cs.Index) {
		return nil
	}
	st := boundCase(cs.Status)
	sz := jsonSize(st) + 1
	heap.Push(&c.h, sized{index: cs.Index, size: sz, status: st})
	c.bytes += int64(sz)
	for (c.bytes > c.limit || len(c.h) > evalsv1alpha1.MaxStatusCases) && len(c.h) > 0 {
		top := heap.Pop(&c.h).(sized)
		c.bytes -= int64(top.size)
		if cut := c.cutoff.Load(); cut == 0 || int64(top.index) < cut-1 {
			c.cutoff.Store(int64(top.index) + 1)
		}
	}
	return nil
}

func (c *candidates) sorted() []sized {
	out := append([]sized(nil), c.h...)
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

type sizedHeap []sized

func (h sizedHeap) Len() int           { return len(h) }
func (h sizedHeap) Less(i, j int) bool { return h[i].index > h[j].index }
func (h sizedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sizedHeap) Push(x any)        { *h = append(*h, x.(sized)) }
func (h *sizedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// boundCase cuts a case's strings and lists to the API bounds, its texts escaped (textbound.PrintableHead): the
// answer and the evaluators' messages quote the runner.
func boundCase(c evalsv1alpha1.CaseResult) evalsv1alpha1.CaseResult {
	c.ID = textbound.PrintableHead(c.ID, MaxCaseIDBytes)
	c.Score = textbound.PrintableHead(c.Score, MaxScoreBytes)
	c.Answer = textbound.PrintableHead(c.Answer, MaxAnswerBytes)
	c.Error = textbound.PrintableHead(c.Error, MaxCaseErrorBytes)
	if len(c.Evaluators) > evalsv1alpha1.MaxCaseEvaluators {
		c.Evaluators = c.Evaluators[:evalsv1alpha1.MaxCaseEvaluators]
	}
	evs := make([]evalsv1alpha1.EvaluatorSummary, len(c.Evaluators))
	for i, e := range c.Evaluators {
		evs[i] = evalsv1alpha1.EvaluatorSummary{
			Name:    textbound.PrintableHead(e.Name, MaxEvaluatorNameBytes),
			Type:    textbound.PrintableHead(e.Type, MaxEvaluatorTypeBytes),
			Verdict: e.Verdict,
			Score:   textbound.PrintableHead(e.Score, MaxScoreBytes),
			Message: textbound.PrintableHead(e.Message, MaxEvaluatorMessageBytes),
		}
	}
	if len(evs) == 0 {
		evs = nil
	}
	c.Evaluators = evs
	return c
}
