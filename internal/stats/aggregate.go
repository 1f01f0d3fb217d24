package stats

import (
	"fmt"
	"math"
)

// Case is one case's results over its trials: the input of Summarize and Paired.
type Case struct {
	ID string
	// Passed counts the trials that passed, of Trials (at least 1) judged.
	Passed, Trials int
	// Score is the mean score over the trials.
	Score float64
	// NoScore marks a case without a score (no trial of it was judged): Summarize leaves it out of MeanScore.
	NoScore bool
}

// PassRate is the share of the case's trials that passed (pass@1 = pass^1).
func (c Case) PassRate() float64 { return float64(c.Passed) / float64(c.Trials) }

// Flaky reports whether the case's trials disagree: some passed and some did not.
func (c Case) Flaky() bool { return c.Passed > 0 && c.Passed < c.Trials }

// Passes reports the case's verdict: its pass rate is at least casePassRate (0 means 1: every trial passed).
// casePassRate·Trials is rounded up to whole trials, so 0.6 of 5 trials needs 3.
func (c Case) Passes(casePassRate float64) bool {
	if casePassRate == 0 {
		casePassRate = 1
	}
	return c.Passed >= int(math.Ceil(casePassRate*float64(c.Trials)-1e-9))
}

func (c Case) validate() error {
	if c.Trials < 1 || c.Passed < 0 || c.Passed > c.Trials {
		return fmt.Errorf("case %q: %d passed of %d trials: want 0 <= passed <= trials and trials >= 1", c.ID, c.Passed, c.Trials)
	}
	if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) {
		return fmt.Errorf("case %q: score %v is not a finite number", c.ID, c.Score)
	}
	return nil
}

// CaseStats are a case's estimators over its N trials.
type CaseStats struct {
	// PassRate is pass@1 = pass^1 = passed/N.
	PassRate float64
	// PassAtN is pass@N: 1 if any trial passed. PassHatN is pass^N: 1 if every trial passed.
	PassAtN, PassHatN float64
}

// Stats returns the case's pass@1, pass@N and pass^N (PassAtK and PassHatK for other k).
func (c Case) Stats() (CaseStats, error) {
	if err := c.validate(); err != nil {
		return CaseStats{}, err
	}
	at, _ := PassAtK(c.Trials, c.Passed, c.Trials)
	hat, _ := PassHatK(c.Trials, c.Passed, c.Trials)
	return CaseStats{PassRate: c.PassRate(), PassAtN: at, PassHatN: hat}, nil
}

// IntervalMethod is how Summarize computes the mean score's interval.
type IntervalMethod string

// Interval methods.
const (
	// IntervalT is Student's t interval over the per-case mean scores (the default).
	IntervalT IntervalMethod = "T"
	// IntervalBootstrap is the percentile bootstrap over cases (BootstrapMean of the per-case mean scores).
	IntervalBootstrap IntervalMethod = "Bootstrap"
)

// SummaryOptions tune Summarize. The zero value is the default.
type SummaryOptions struct {
	// CasePassRate is the share of its trials a case must pass for its verdict to pass (0: 1, every trial).
	CasePassRate float64
	// Level is the confidence level of both intervals (0: 95%).
	Level float64
	// ScoreInterval is the mean score's interval ("": IntervalT).
	ScoreInterval IntervalMethod
	// Bootstrap seeds and sizes the bootstrap with IntervalBootstrap (its Level is Level).
	Bootstrap BootstrapOptions
}

// Summary is a run's aggregate over its cases.
type Summary struct {
	// Cases counts the cases; PassedCases those whose verdict passes (Case.Passes).
	Cases, PassedCases int
	// PassRate is PassedCases/Cases with its Wilson interval: over case verdicts, so a case counts once whatever
	// its number of trials.
	PassRate Interval
	// Trials and PassedTrials count every trial of every case.
	Trials, PassedTrials int
	// MeanPassRate is the mean over cases of each case's pass rate (pass@1 = pass^1), with an interval clustered
	// by case: when every case has one trial, the Wilson interval of the passed trials; otherwise the
	// ScoreInterval method's over the per-case pass rates. A single case of several trials has no interval:
	// Low = High = Estimate and Level is 0.
	MeanPassRate Interval
	// MeanPassAtN and MeanPassHatN are the means over cases of pass@N and pass^N, N each case's trials: the share
	// of cases with a passing trial, and with every trial passing.
	MeanPassAtN, MeanPassHatN float64
	// Scored counts the cases with a score (NoScore false).
	Scored int
	// MeanScore is the mean over the scored cases of each case's mean score, with an interval clustered by case
	// (each case is one observation, its trials averaged first). With a single scored case there is no interval:
	// Low = High = Estimate and Level is 0; with none, MeanScore is zero.
	MeanScore Interval
	// Flaky lists the ids of the cases whose trials disagree, in input order.
	Flaky []string
}

// Summarize aggregates a run's per-case results. Case ids are not checked for duplicates here (Paired does).
func Summarize(cases []Case, opts SummaryOptions) (Summary, error) {
	if len(cases) == 0 {
		return Summary{}, fmt.Errorf("summary: no cases")
	}
	if r := opts.CasePassRate; !(r >= 0 && r <= 1) {
		return Summary{}, fmt.Errorf("summary: case pass rate %v must lie in (0, 1] (0 for 1, every trial)", r)
	}
	level, err := levelOrDefault(opts.Level)
	if err != nil {
		return Summary{}, fmt.Errorf("summary: %w", err)
	}
	switch opts.ScoreInterval {
	case "", IntervalT, IntervalBootstrap:
	default:
		return Summary{}, fmt.Errorf("summary: score interval %q is not one of %q, %q", opts.ScoreInterval, IntervalT, IntervalBootstrap)
	}
	s := Summary{Cases: len(cases)}
	scores := make([]float64, 0, len(cases))
	rates := make([]float64, len(cases))
	oneTrial := true
	for i, c := range cases {
		st, err := c.Stats()
		if err != nil {
			return Summary{}, fmt.Errorf("summary: %w", err)
		}
		if c.Passes(opts.CasePassRate) {
			s.PassedCases++
		}
		if c.Flaky() {
			s.Flaky = append(s.Flaky, c.ID)
		}
		s.Trials += c.Trials
		s.PassedTrials += c.Passed
		oneTrial = oneTrial && c.Trials == 1
		rates[i] = st.PassRate
		s.MeanPassAtN += st.PassAtN
		s.MeanPassHatN += st.PassHatN
		if !c.NoScore {
			scores = append(scores, c.Score)
		}
	}
	s.MeanPassAtN /= float64(len(cases))
	s.MeanPassHatN /= float64(len(cases))
	s.Scored = len(scores)
	if s.PassRate, err = Wilson(s.PassedCases, s.Cases, level); err != nil {
		return Summary{}, fmt.Errorf("summary: %w", err)
	}
	if oneTrial {
		s.MeanPassRate, err = Wilson(s.PassedTrials, s.Trials, level)
	} else {
		s.MeanPassRate, err = meanInterval(rates, level, opts)
	}
	if err != nil {
		return Summary{}, fmt.Errorf("summary: %w", err)
	}
	if len(scores) > 0 {
		if s.MeanScore, err = meanInterval(scores, level, opts); err != nil {
			return Summary{}, fmt.Errorf("summary: %w", err)
		}
	}
	return s, nil
}

// meanInterval is the mean of per-case values with opts' interval at level; a single value has no interval.
func meanInterval(values []float64, level float64, opts SummaryOptions) (Interval, error) {
	if len(values) < 2 {
		return Interval{Estimate: values[0], Low: values[0], High: values[0]}, nil
	}
	if opts.ScoreInterval == IntervalBootstrap {
		b := opts.Bootstrap
		b.Level = level
		return BootstrapMean(values, b)
	}
	return TInterval(values, level)
}
