package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// chartPoint is one kept run of a schedule: when it ran, its pass rate and mean score.
type chartPoint struct {
	Run         string
	Time        time.Time
	Reason      string
	Total       int32
	PassRate    float64
	HasPassRate bool
	Score       float64
	HasScore    bool
}

// When is the point's time as the page shows it.
func (p chartPoint) When() string { return p.Time.UTC().Format(time.RFC3339) }

// PassRateText and ScoreText are the point's values as the status writes them, "-" when unknown.
func (p chartPoint) PassRateText() string { return valueText(p.PassRate, p.HasPassRate) }

// ScoreText is the point's mean score, "-" when unknown.
func (p chartPoint) ScoreText() string { return valueText(p.Score, p.HasScore) }

func valueText(f float64, ok bool) string {
	if !ok {
		return "-"
	}
	return verdict.FormatScore(f)
}

// Chart geometry, in SVG user units.
const (
	chartWidth, chartHeight = 720, 240
	chartLeft, chartRight   = 48, 16
	chartTop, chartBottom   = 16, 40
)

// chart is the SVG chart of a schedule's runs: two series over time, pass rate and mean score, each a polyline
// and a circle per point (its <title> names the run and its value).
type chart struct {
	Width, Height int
	Series        []chartSeries
	// Grid are the horizontal lines at 0, 0.25, ..., 1; Ticks the first and last times.
	Grid  []chartLine
	Ticks []chartTick
}

// chartSeries is one line of the chart.
type chartSeries struct {
	Name, Class, Polyline string
	Points                []chartDot
}

// chartDot is one circle.
type chartDot struct {
	X, Y  float64
	Run   string
	Value string
	When  string
}

// chartLine is one grid line and its label.
type chartLine struct {
	Y     float64
	Label string
}

// chartTick is a time label under the x axis.
type chartTick struct {
	X      float64
	Label  string
	Anchor string
}

// newChart lays out points (oldest first); nil when no point has a value.
func newChart(points []chartPoint) *chart {
	var first, last time.Time
	n := 0
	for _, p := range points {
		if !p.HasPassRate && !p.HasScore {
			continue
		}
		if n == 0 {
			first = p.Time
		}
		last = p.Time
		n++
	}
	if n == 0 {
		return nil
	}
	c := &chart{Width: chartWidth, Height: chartHeight}
	plotW, plotH := float64(chartWidth-chartLeft-chartRight), float64(chartHeight-chartTop-chartBottom)
	span := last.Sub(first)
	x := func(t time.Time) float64 {
		if span <= 0 {
			return chartLeft + plotW/2
		}
		return chartLeft + plotW*float64(t.Sub(first))/float64(span)
	}
	y := func(v float64) float64 { return chartTop + plotH*(1-v) }
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.Grid = append(c.Grid, chartLine{Y: y(v), Label: fmt.Sprintf("%.2f", v)})
	}
	c.Ticks = append(c.Ticks, chartTick{X: x(first), Label: first.UTC().Format("2006-01-02 15:04"), Anchor: "start"})
	if span > 0 {
		c.Ticks = append(c.Ticks, chartTick{X: x(last), Label: last.UTC().Format("2006-01-02 15:04"), Anchor: "end"})
	}
	for _, s := range []struct {
		name, class string
		value       func(chartPoint) (float64, bool)
	}{
		{"pass rate", "pass-rate", func(p chartPoint) (float64, bool) { return p.PassRate, p.HasPassRate }},
		{"mean score", "mean-score", func(p chartPoint) (float64, bool) { return p.Score, p.HasScore }},
	} {
		cs := chartSeries{Name: s.name, Class: s.class}
		var poly []string
		for _, p := range points {
			v, ok := s.value(p)
			if !ok {
				continue
			}
			d := chartDot{X: x(p.Time), Y: y(v), Run: p.Run, Value: verdict.FormatScore(v), When: p.When()}
			cs.Points = append(cs.Points, d)
			poly = append(poly, fmt.Sprintf("%.1f,%.1f", d.X, d.Y))
		}
		cs.Polyline = strings.Join(poly, " ")
		c.Series = append(c.Series, cs)
	}
	return c
}
