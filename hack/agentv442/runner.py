#!/usr/bin/env python3
"""The batch runner of the AgentV 4.42.4 oracle (hack/agentv442-oracle.sh): AgentV runs it once per suite as a CLI
target with provider_batching: true, and it answers every test from fixed answers, so that the recorded results are
reproducible.

  runner.py ANSWERS.jsonl OUTPUT_FILE

ANSWERS.jsonl holds one JSON object per line, AgentV's batch record: id, text or output (messages with tool_calls),
and token_usage, cost_usd and duration_ms when the example needs them (duration_ms always, or AgentV would time the
run itself). The runner checks every line and writes them, compact, to OUTPUT_FILE; AgentV takes the records of the
tests it runs and ignores the others.
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: runner.py ANSWERS.jsonl OUTPUT_FILE")
    seen = set()
    out = []
    with open(argv[1], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{argv[1]}:{n}: not JSON: {e}")
            if not isinstance(rec, dict) or not isinstance(rec.get("id"), str) or not rec["id"]:
                sys.exit(f"{argv[1]}:{n}: a record needs a string id")
            if rec["id"] in seen:
                sys.exit(f"{argv[1]}:{n}: id {rec['id']!r} answered twice")
            if "duration_ms" not in rec:
                sys.exit(f"{argv[1]}:{n}: id {rec['id']!r} has no duration_ms (AgentV would time the run instead)")
            seen.add(rec["id"])
            out.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
