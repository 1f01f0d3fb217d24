package report

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/compare"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// The page's parts, embedded in the binary: the markup of the server-rendered sections, the script that renders
// the case table and the style sheet. The HTML file carries all three inline; it loads nothing.
var (
	//go:embed html/report.html.tmpl
	pageTemplate string
	//go:embed html/report.js
	pageScript string
	//go:embed html/report.css
	pageStyle string
)

// page is the parsed template of the server-rendered sections.
var page = template.Must(template.New("report").Parse(pageTemplate))

// ContentSecurityPolicy is the page's Content-Security-Policy (its meta element, and the header of a served
// report): nothing from the network (default-src 'none' covers connect, img, font, frame and media), the one
// inline script and style sheet by their hashes, no forms and no <base>.
var ContentSecurityPolicy = "default-src 'none'; script-src '" + hashSource(pageScript) + "'; style-src '" + hashSource(pageStyle) +
	"'; img-src data:; base-uri 'none'; form-action 'none'"

// hashSource is a CSP hash source of an inline script or style.
func hashSource(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// DefaultMaxTextBytes is the default budget of the texts a report embeds (answers, inputs, expected answers,
// reasonings), over every case.
const DefaultMaxTextBytes = 48 << 20

// Per-case text bounds: the budget is shared out evenly, each case getting at least minCaseText and at most
// maxCaseText bytes; the answer gets half of a case's share, the input and the expected answer a quarter each,
// and each evaluator's reasoning a quarter.
const (
	minCaseText = 1 << 10
	maxCaseText = 64 << 10
	// maxMessageText bounds the one-line message of the table.
	maxMessageText = 240
	// maxNoteText bounds one hit or miss.
	maxNoteText = 512
	// maxListed bounds the missing ids, parse errors and unexpected ids the page lists.
	maxListed = 1000
	// defaultPageSize is how many case rows the table shows at once (its select offers up to maxPageSize).
	defaultPageSize = 100
	maxPageSize     = 200
)

// CaseText is what the eval file says of a case: its input (the user's text) and its expected answer.
type CaseText struct {
	Input, Expected string
}

// Baseline is a run's baseline for the report: the baseline run and its stored result lines. Without lines (the
// baseline's results are gone) the report marks the cases status.baseline names.
type Baseline struct {
	Run   *evalsv1alpha1.EvalRun
	Lines []*results.Line
}

// HTMLInput is what an HTML report shows. Every field but Generated is optional: a schedule's report without a run
// shows its chart only.
type HTMLInput struct {
	// Run is the run reported, Lines its stored result lines (the first line of an id) and LinesNote why there are
	// none (the run has not stored results yet, or they are gone).
	Run       *evalsv1alpha1.EvalRun
	Lines     []*results.Line
	LinesNote string
	// Cases are the eval file's texts by case id.
	Cases map[string]CaseText
	// Baseline is the run's baseline (spec.baseline).
	Baseline *Baseline
	// Schedule is the EvalSchedule owning the run, or the one reported; History its kept runs.
	Schedule *evalsv1alpha1.EvalSchedule
	History  []KeptRun
	// Generated is when the report was made.
	Generated time.Time
	// RefreshSeconds, when positive, makes the page reload itself (a served report of a run in progress).
	RefreshSeconds int
	// MaxTextBytes is the budget of embedded texts; 0 is DefaultMaxTextBytes.
	MaxTextBytes int
}

// view is what the template renders.
type view struct {
	Title, CSP, Generated string
	// Style is the style sheet, inserted as is (its hash is in the CSP).
	Style    template.CSS
	Refresh  int
	Run      *runView
	Schedule *scheduleView
}

// runView is the server-rendered part of a run's report.
type runView struct {
	Name, Namespace, Succeeded, Reason, Message, Passed, PassedMessage string
	Started, Duration, EvalFile, RunnerImage, LinesNote                string
	Summary                                                            *evalsv1alpha1.RunSummary
	Stored                                                             int
	Outcomes                                                           []outcomeCount
	Shards                                                             []shardRow
	ShardsOmitted                                                      int32
	Cost                                                               []costRow
	Budgets                                                            string
	ParseErrors                                                        []evalsv1alpha1.ParseError
	ParseErrorsMore                                                    int
	Missing, Unexpected                                                []string
	MissingMore, UnexpectedMore                                        int
	Resume                                                             *evalsv1alpha1.ResumeStatus
	Baseline                                                           *evalsv1alpha1.BaselineComparison
	CutCases                                                           int
	// Trials is the run's trials (spec.trials.count above 1); Paired the baseline's Paired test
	// (status.baseline.test: Paired).
	Trials *trialsView
	Paired *pairedView
}

// trialsView is what the page says of a run's trials: the rule, and status.trials' figures when the merge wrote
// them.
type trialsView struct {
	Count    int
	PassRate string
	// Rule says the case rule in words ("every trial passes", "at least 0.6 of its trials pass").
	Rule string
	// Status is status.trials (nil before the merge wrote it).
	Status *evalsv1alpha1.TrialsStatus
	// Results is how many trial results are stored (a second result of a trial, or one beyond N, not counted).
	Results int
	// Flaky are status.trials' flaky ids, listed when the page has no stored results to filter; FlakyMore counts
	// the flaky cases beyond them.
	Flaky     []string
	FlakyMore int
}

// pairedView is the baseline's Paired test as the page shows it: status.baseline.paired, the test in words, the
// bounds it was held to and the Regressed condition.
type pairedView struct {
	*evalsv1alpha1.PairedComparison
	Method, Alpha, MinEffect                     string
	Regressed, RegressedReason, RegressedMessage string
}

// outcomeCount is how many stored cases have one outcome.
type outcomeCount struct {
	Outcome Outcome
	Count   int
}

// WriteHTML writes the report as one self-contained HTML page: the summary, shards, parse errors and missing ids
// rendered as markup, the cases as JSON (every <, > and & escaped, so no text can end the script element) rendered
// by the inline script a page of rows at a time, and a schedule's chart as inline SVG.
func WriteHTML(w io.Writer, in HTMLInput) error {
	v := view{CSP: ContentSecurityPolicy, Style: template.CSS(pageStyle), Generated: in.Generated.UTC().Format(time.RFC3339), Refresh: in.RefreshSeconds}
	data := pageData{PageSize: defaultPageSize, MaxPageSize: maxPageSize}
	if in.Run != nil {
		v.Title = "EvalRun " + in.Run.Namespace + "/" + in.Run.Name
		v.Run, data = runReport(in)
	}
	if in.Schedule != nil {
		v.Schedule = scheduleReport(in.Schedule, in.History)
		if v.Title == "" {
			v.Title = "EvalSchedule " + in.Schedule.Namespace + "/" + in.Schedule.Name
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := page.Execute(bw, v); err != nil {
		return fmt.Errorf("rendering the report: %w", err)
	}
	if in.Run != nil {
		// encoding/json escapes <, >, &, U+2028 and U+2029 in strings: the JSON cannot close the element.
		_, _ = bw.WriteString(`<script type="application/json" id="report-data">`)
		if err := json.NewEncoder(bw).Encode(data); err != nil {
			return fmt.Errorf("encoding the report's cases: %w", err)
		}
		_, _ = bw.WriteString("</script>\n<script>")
		_, _ = bw.WriteString(pageScript)
		_, _ = bw.WriteString("</script>\n")
	}
	_, _ = bw.WriteString("</body>\n</html>\n")
	// A write error sticks in bw: Flush returns it.
	return bw.Flush()
}

// runReport builds the run's sections and its cases' data.
func runReport(in HTMLInput) (*runView, pageData) {
	run := in.Run
	st := &run.Status
	rv := &runView{Name: run.Name, Namespace: run.Namespace, Summary: st.Summary, Stored: len(in.Lines),
		LinesNote: in.LinesNote, EvalFile: st.EvalFileSHA256, Resume: st.Resume}
	if c := meta.FindStatusCondition(st.Conditions, evalsv1alpha1.ConditionSucceeded); c != nil {
		rv.Succeeded, rv.Reason, rv.Message = string(c.Status), c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(st.Conditions, evalsv1alpha1.ConditionPassed); c != nil {
		rv.Passed, rv.PassedMessage = string(c.Status)+" ("+c.Reason+")", c.Message
	}
	if st.StartTime != nil {
		rv.Started = st.StartTime.UTC().Format(time.RFC3339)
		if st.CompletionTime != nil {
			rv.Duration = st.CompletionTime.Sub(st.StartTime.Time).Round(time.Second).String()
		}
	}
	rv.RunnerImage = runnerImages(st)
	rv.Shards = shardRows(st.Shards)
	rv.Cost, rv.Budgets = costRows(st.Cost), budgetsText(run)
	if st.Sharding != nil {
		rv.ShardsOmitted = st.Sharding.OmittedShards
	}
	rv.ParseErrors, rv.ParseErrorsMore = listed(st.ParseErrors)
	if st.Results != nil {
		rv.ParseErrorsMore += int(st.Results.OmittedParseErrors)
	}
	rv.Unexpected, rv.UnexpectedMore = listed(st.UnexpectedIDs)
	if st.Results != nil {
		rv.UnexpectedMore += int(st.Results.OmittedUnexpectedIDs)
	}

	rule := TrialRuleOf(run)
	var groups []*TrialCase
	if rule.N() > 1 {
		groups = GroupTrials(rule, in.Lines)
		kept := 0
		for _, c := range groups {
			for _, l := range c.Trials {
				if l != nil {
					kept++
				}
			}
		}
		rv.Trials = trialsViewOf(rule, st.Trials, kept)
		rv.Stored = len(groups)
	}
	counts := map[Outcome]int{}
	var missing []string
	count := func(id string, o Outcome) {
		counts[o]++
		if o == OutcomeMissing {
			missing = append(missing, id)
		}
	}
	if groups != nil {
		for _, c := range groups {
			count(c.ID, c.Outcome())
		}
	} else {
		for _, l := range in.Lines {
			count(l.ID, CaseOutcome(l))
		}
	}
	if len(in.Lines) == 0 {
		// Nothing stored (yet): the status's bounded list.
		missing = st.MissingIDs
	}
	rv.Missing, rv.MissingMore = listed(missing)
	for _, o := range []Outcome{OutcomeFail, OutcomeError, OutcomeMissing, OutcomeSkipped, OutcomePass} {
		rv.Outcomes = append(rv.Outcomes, outcomeCount{Outcome: o, Count: counts[o]})
	}

	marks := baselineMarks(in)
	if marks != nil {
		rv.Baseline = &marks.status
		rv.Paired = pairedViewOf(run, &marks.status)
	}
	var data pageData
	if groups != nil {
		data = trialCasesData(in, rule, groups, marks)
	} else {
		data = casesData(in, marks)
	}
	rv.CutCases = data.CutCases
	return rv, data
}

// trialsViewOf is the page's view of a run's trials under rule, with status.trials when written; with no stored
// result to filter, status.trials' flaky ids are listed.
func trialsViewOf(rule results.TrialRule, st *evalsv1alpha1.TrialsStatus, stored int) *trialsView {
	tv := &trialsView{Count: rule.N(), PassRate: rule.PassRateText, Status: st, Results: stored}
	if tv.PassRate == "" {
		tv.PassRate = evalsv1alpha1.DefaultTrialsPassRate
	}
	tv.Rule = ruleText(tv.PassRate)
	if st != nil && stored == 0 {
		tv.Flaky = st.Flaky
		tv.FlakyMore = max(int(st.FlakyCases)-len(st.Flaky), 0)
	}
	return tv
}

// pairedMethods say each Paired test in words.
var pairedMethods = map[evalsv1alpha1.PairedMethod]string{
	evalsv1alpha1.PairedMcNemarExact:       "McNemar's exact test on the discordant cases",
	evalsv1alpha1.PairedSignFlipExact:      "the exact sign-flip test on the per-case pass-rate changes",
	evalsv1alpha1.PairedSignFlipMonteCarlo: "the sign-flip test on the per-case pass-rate changes (10,000 seeded sign patterns)",
}

// pairedViewOf is the Paired test of the comparison, nil unless the comparison's test is Paired.
func pairedViewOf(run *evalsv1alpha1.EvalRun, c *evalsv1alpha1.BaselineComparison) *pairedView {
	if c.Test != evalsv1alpha1.BaselineTestPaired || c.Paired == nil {
		return nil
	}
	pv := &pairedView{PairedComparison: c.Paired, Method: "none: no case could be tested",
		Alpha: evalsv1alpha1.DefaultBaselineAlpha, MinEffect: evalsv1alpha1.DefaultBaselineMinEffect}
	if c.Paired.Method != "" {
		pv.Method = string(c.Paired.Method)
		if words, ok := pairedMethods[c.Paired.Method]; ok {
			pv.Method = words + " (" + string(c.Paired.Method) + ")"
		}
	}
	if b := run.Spec.Baseline; b != nil {
		if b.Alpha != nil {
			pv.Alpha = *b.Alpha
		}
		if b.MinEffect != nil {
			pv.MinEffect = *b.MinEffect
		}
	}
	if cond := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed); cond != nil {
		pv.Regressed, pv.RegressedReason, pv.RegressedMessage = string(cond.Status), cond.Reason, cond.Message
	}
	return pv
}

// runnerImages is the runner image digest (status.runner.imageID), or the distinct digests of the shards.
func runnerImages(st *evalsv1alpha1.EvalRunStatus) string {
	var ids []string
	if st.Runner != nil && st.Runner.ImageID != nil {
		ids = append(ids, *st.Runner.ImageID)
	}
	for _, s := range st.Shards {
		if s.ImageID != nil && !slices.Contains(ids, *s.ImageID) {
			ids = append(ids, *s.ImageID)
		}
	}
	return strings.Join(ids, ", ")
}

// listed is at most maxListed items of list and how many more there are.
func listed[T any](list []T) ([]T, int) {
	if len(list) > maxListed {
		return list[:maxListed], len(list) - maxListed
	}
	return list, 0
}

// marks is what the report knows of the baseline: the comparison and each shared case's baseline result.
type marks struct {
	status evalsv1alpha1.BaselineComparison
	// newly maps a case id to "NewlyFailing" or "NewlyPassing".
	newly map[string]string
	// base maps a case id to its baseline result (only with the baseline's lines).
	base map[string]baseCase
}

// baseCase is a case's result in the baseline: its outcome (over its trials, with trials) and its score, when it
// has one to show (Pass or Fail).
type baseCase struct {
	outcome Outcome
	score   float64
	scored  bool
}

// baselineMarks compares the run's lines with its baseline's (internal/compare, every id, each run's cases decided
// over its trials, and spec.baseline's test run on them: the manager's test with the manager's seed), or, without
// the baseline's lines, takes status.baseline (its bounded id lists). nil without a baseline.
func baselineMarks(in HTMLInput) *marks {
	b := in.Baseline
	if b != nil && b.Run != nil && len(b.Lines) > 0 && len(in.Lines) > 0 {
		cb := compare.NewBuilder(0)
		baseRule := TrialRuleOf(b.Run)
		cb.Trials(baseRule, TrialRuleOf(in.Run))
		m := &marks{newly: map[string]string{}, base: make(map[string]baseCase, len(b.Lines))}
		for _, l := range b.Lines {
			cb.AddBaseline(l)
		}
		if baseRule.N() > 1 {
			for _, c := range GroupTrials(baseRule, b.Lines) {
				score, scored := c.Score()
				m.base[c.ID] = baseCase{outcome: c.Outcome(), score: score, scored: scored}
			}
		} else {
			for _, l := range b.Lines {
				if _, dup := m.base[l.ID]; !dup {
					o := CaseOutcome(l)
					m.base[l.ID] = baseCase{outcome: o, score: l.Score, scored: o == OutcomePass || o == OutcomeFail}
				}
			}
		}
		for _, l := range in.Lines {
			cb.AddRun(l)
		}
		c := cb.Finish()
		m.status = c.Status()
		m.status.RunName, m.status.RunUID = b.Run.Name, string(b.Run.UID)
		m.status.EvalFile = evalsv1alpha1.EvalFileSame
		if b.Run.Status.EvalFileSHA256 != in.Run.Status.EvalFileSHA256 {
			m.status.EvalFile = evalsv1alpha1.EvalFileDifferent
		}
		m.decide(&c, in.Run, b.Run)
		m.mark(c.NewlyFailing, c.NewlyPassing)
		return m
	}
	if s := in.Run.Status.Baseline; s != nil {
		m := &marks{status: *s, newly: map[string]string{}}
		m.mark(s.NewlyFailing, s.NewlyPassing)
		return m
	}
	return nil
}

// decide runs the run's spec.baseline test on the comparison, as the manager does (the same bounds and seed, so
// the same p-value and intervals); when it cannot (no spec.baseline, a field it cannot read), the test
// status.baseline recorded stands.
func (m *marks) decide(c *compare.Comparison, run, baseline *evalsv1alpha1.EvalRun) {
	if spec := run.Spec.Baseline; spec != nil {
		if bounds, err := compare.BoundsOf(spec); err == nil {
			bounds.Seed = compare.Seed(baseline, run)
			if d, err := c.Decide(bounds); err == nil {
				d.Record(&m.status)
				return
			}
		}
	}
	if st := run.Status.Baseline; st != nil {
		m.status.Test, m.status.Paired = st.Test, st.Paired
	}
}

func (m *marks) mark(failing, passing []string) {
	for _, id := range failing {
		m.newly[id] = "NewlyFailing"
	}
	for _, id := range passing {
		m.newly[id] = "NewlyPassing"
	}
}

// scheduleView is the chart of a schedule's kept runs.
type scheduleView struct {
	Name, Namespace, Schedule string
	Points                    []chartPoint
	Chart                     *chart
}

// KeptRun is one of a schedule's kept runs and the time it was scheduled for (zero when unknown: its start, else
// its creation, stands in).
type KeptRun struct {
	Run           *evalsv1alpha1.EvalRun
	ScheduledTime time.Time
}

// When is when the kept run ran.
func (k KeptRun) When() time.Time {
	switch {
	case !k.ScheduledTime.IsZero():
		return k.ScheduledTime
	case k.Run.Status.StartTime != nil:
		return k.Run.Status.StartTime.Time
	}
	return k.Run.CreationTimestamp.Time
}

// scheduleReport builds the chart of the schedule's kept runs that have a summary, oldest first.
func scheduleReport(s *evalsv1alpha1.EvalSchedule, history []KeptRun) *scheduleView {
	sv := &scheduleView{Name: s.Name, Namespace: s.Namespace, Schedule: s.Spec.Schedule}
	for _, k := range history {
		r := k.Run
		p := chartPoint{Run: r.Name, Time: k.When()}
		if c := meta.FindStatusCondition(r.Status.Conditions, evalsv1alpha1.ConditionSucceeded); c != nil {
			p.Reason = c.Reason
		}
		sum := r.Status.Summary
		if sum == nil || sum.Total == 0 {
			p.Reason += " (no summary)"
			sv.Points = append(sv.Points, p)
			continue
		}
		p.PassRate, p.HasPassRate = parseScore(sum.PassRate)
		p.Score, p.HasScore = parseScore(sum.MeanScore)
		p.Total = sum.Total
		sv.Points = append(sv.Points, p)
	}
	slices.SortStableFunc(sv.Points, func(a, b chartPoint) int { return a.Time.Compare(b.Time) })
	sv.Chart = newChart(sv.Points)
	return sv
}

// parseScore reads a status score ("0.8750").
func parseScore(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
