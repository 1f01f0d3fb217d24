#!/usr/bin/env python3
"""Turns one suite's run of AgentV 4.42.4 (hack/agentv442-oracle.sh) into the oracle's test data.

  normalize.py --bundle DIR --index INDEX.jsonl --requests DIR --stdin DIR --out DIR

Reads AgentV's run directory (--index: its index.jsonl; the grading.json beside each test), the judge requests
test/judgeserver recorded in arrival order (--requests: 0001.json, ...) and the code graders' stdin record-stdin kept
(--stdin), and writes to --out:

  requests/NNNN.json  every judge request body, numbered in the order of the results: test by test, and within a
                      test grader by grader, a composite's members before its aggregator (AgentV asks a composite's
                      members in parallel, so their arrival order is not stable);
  graders/NNNN.json   every code grader's (and code aggregator's) command, working directory and stdin, in that order;
  results.jsonl       AgentV's result of every test, one line each, in index.jsonl's order: score, status, pass
                      (status "ok": score >= threshold), the graders' scores, verdicts, weights, assertions and
                      details (nested for composites), each llm request and code grader input named by its file.

The bundle's absolute path is written /BUNDLE everywhere; any other trace of the scratch directory is an error, and so
is a request or a grader run that no result accounts for (and the reverse). Timings of AgentV's own (timestamps,
grader durations), its artifact paths and projection ids are left out: they change from run to run.
"""
import argparse
import json
import os
import sys

PLACEHOLDER = "/BUNDLE"


def die(msg):
    sys.exit(f"normalize: {msg}")


def replace_paths(value, root):
    """value with root written PLACEHOLDER in every string."""
    if isinstance(value, str):
        return value.replace(root, PLACEHOLDER)
    if isinstance(value, (list, tuple)):
        return type(value)(replace_paths(v, root) for v in value)
    if isinstance(value, dict):
        return {k: replace_paths(v, root) for k, v in value.items()}
    return value


def prompts(body):
    """The system and user texts of a judge request body, chat completions' (messages) or the Responses API's
    (instructions, input), as test/judgeserver reads them."""
    system, user = body.get("instructions", ""), ""
    messages = body.get("messages")
    if messages is None:
        messages = body.get("input", [])
        if isinstance(messages, str):
            return system, messages
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        if m.get("role") in ("system", "developer"):
            system += content or ""
        elif m.get("role") == "user":
            user += content or ""
    return system, user


def post_order(scores):
    """Grader results in the order AgentV runs them: a composite's members, then the composite itself."""
    for s in scores or []:
        yield from post_order(s.get("scores"))
        yield s


def llm_input(s):
    """The prompts a grader result says it sent, as they go on the wire: AgentV's openai provider trims both
    (buildChatPrompt in llm-providers.ts), its results keep them untrimmed."""
    inp = s.get("input")
    if isinstance(inp, dict) and isinstance(inp.get("userPrompt"), str):
        return inp["systemPrompt"].strip(), inp["userPrompt"].strip()
    return None


def code_input(s):
    inp = s.get("input")
    if not isinstance(inp, dict):
        return False
    return s.get("type") == "code-grader" or inp.get("aggregator") == "code-grader"


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--bundle", "--index", "--requests", "--stdin", "--out"):
        ap.add_argument(flag, required=True)
    args = ap.parse_args()
    root = os.path.realpath(args.bundle)
    scratch = os.path.dirname(root)
    run_dir = os.path.dirname(args.index)

    with open(args.index, encoding="utf-8") as f:
        tests = [json.loads(line) for line in f if line.strip()]
    if not tests:
        die(f"{args.index} has no result")

    names = sorted(n for n in os.listdir(args.requests) if n.endswith(".json"))
    arrived = []
    for n in names:
        with open(os.path.join(args.requests, n), encoding="utf-8") as f:
            body = replace_paths(json.load(f), root)
        arrived.append(body)

    stdin_names = sorted(n[:-5] for n in os.listdir(args.stdin) if n.endswith(".json"))
    runs = []
    for n in stdin_names:
        with open(os.path.join(args.stdin, n + ".cmd"), "rb") as f:
            cmd = f.read().decode("utf-8").split("\0")[:-1]
        with open(os.path.join(args.stdin, n + ".json"), encoding="utf-8") as f:
            raw = f.read()
        try:
            stdin = json.loads(raw)
        except json.JSONDecodeError:
            stdin = raw
        runs.append(replace_paths({"cwd": cmd[0], "command": cmd[1:], "stdin": stdin}, root))

    req_out, run_out, results = [], [], []
    next_req = next_run = 0

    def take_requests(n, test_id):
        nonlocal next_req
        seg = arrived[next_req:next_req + n]
        if len(seg) != n:
            die(f"test {test_id}: its results account for {n} judge requests, only {len(seg)} arrived after the "
                f"earlier tests'")
        next_req += n
        return seg

    for t in tests:
        tid = t["test_id"]
        scores = t.get("scores") or []
        order = list(post_order(scores))
        wanted = [(s, replace_paths(llm_input(s), root)) for s in order if llm_input(s)]
        implicit = not scores and t.get("execution_status") != "execution_error"
        n = len(wanted) + (1 if implicit else 0)
        seg = take_requests(n, tid)
        refs = {}
        for s, (system, user) in wanted:
            for i, body in enumerate(seg):
                if body is not None and prompts(body) == (system, user):
                    req_out.append(body)
                    refs[id(s)] = f"requests/{len(req_out):04d}.json"
                    seg[i] = None
                    break
            else:
                die(f"test {tid}: no recorded request is grader {s.get('name')!r}'s prompt")
        test_request = None
        if implicit:
            body = next(b for b in seg if b is not None)
            req_out.append(body)
            test_request = f"requests/{len(req_out):04d}.json"
        code = [s for s in order if code_input(s)]
        for s in code:
            if next_run >= len(runs):
                die(f"test {tid}: grader {s.get('name')!r} ran a command that record-stdin did not see")
            run = runs[next_run]
            next_run += 1
            want = replace_paths(s["input"], root)
            if "command" in want and want["command"] != run["command"]:
                die(f"test {tid}: grader {s.get('name')!r} ran {want['command']}, record-stdin saw {run['command']}")
            run_out.append(run)
            refs[id(s)] = f"graders/{len(run_out):04d}.json"
        results.append(replace_paths(test_result(t, refs, test_request, run_dir), root))

    if next_req != len(arrived):
        die(f"{len(arrived) - next_req} judge requests arrived that no result accounts for")
    if next_run != len(runs):
        die(f"{len(runs) - next_run} code grader runs that no result accounts for")

    for i, body in enumerate(req_out, 1):
        write_json(os.path.join(args.out, "requests", f"{i:04d}.json"), body)
    for i, run in enumerate(run_out, 1):
        write_json(os.path.join(args.out, "graders", f"{i:04d}.json"), run)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

    for dirpath, _, files in os.walk(args.out):
        for name in files:
            with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                if scratch in f.read():
                    die(f"{os.path.join(dirpath, name)} still names the scratch directory {scratch}")
    print(f"{len(results)} tests, {len(req_out)} judge requests, {len(run_out)} code grader runs")


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, indent=2)
        f.write("\n")


def grader_result(s, refs):
    out = {"name": s.get("name"), "type": s.get("type"), "score": s.get("score")}
    for key in ("weight", "verdict", "assertions", "details"):
        if key in s:
            out[key] = s[key]
    ref = refs.get(id(s))
    if ref and ref.startswith("requests/"):
        out["request"] = ref
    elif ref:
        out["grader"] = ref
    elif "input" in s:
        out["input"] = s["input"]
    if s.get("scores"):
        out["scores"] = [grader_result(c, refs) for c in s["scores"]]
    return out


def test_result(t, refs, test_request, run_dir):
    out = {"test_id": t["test_id"], "suite": t.get("suite"), "target": t.get("target"), "score": t["score"],
           "execution_status": t.get("execution_status"), "pass": t.get("execution_status") == "ok"}
    for key in ("conversation_id", "error", "failure_stage", "failure_reason_code", "duration_ms", "token_usage",
                "cost_usd"):
        if key in t:
            out[key] = t[key]
    if test_request:
        out["request"] = test_request
    grading = t.get("grading_path")
    if grading and os.path.exists(os.path.join(run_dir, grading)):
        with open(os.path.join(run_dir, grading), encoding="utf-8") as f:
            g = json.load(f)
        out["assertions"] = g.get("assertions", [])
    out["scores"] = [grader_result(s, refs) for s in t.get("scores") or []]
    return out


if __name__ == "__main__":
    main()
