// Package launcher is the runner container's init (PID 1): it renders the runner's command template ({EVAL_FILE},
// {OUTPUT_FILE}, {PROMPT_FILE}) with quoting, runs the runner (Batch) or one invocation per case (PerCase, prompt
// files created fresh) in process groups under their timeouts, kills and reaps whatever the runner leaves
// behind, and writes its report last, framed at the end of the runner-end FIFO, once no runner process is left.
package launcher
