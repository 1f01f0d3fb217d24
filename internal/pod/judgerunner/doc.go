// Package judgerunner is a judge container of a run's pod, run as its PID 1: it judges its share of the cases'
// code_judge scripts one case at a time, kills and reaps every other process of the container after each script,
// and only then sends that case's verdicts as authenticated frames on its judge-end FIFO, so that nothing a script
// (or an answer it runs) starts can outlive its case or forge a verdict.
package judgerunner
