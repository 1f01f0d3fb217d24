# The code_judge of the screening sample, run by the python3 of the judge image (docs/judging.md#the-judge-image). It reads
# the code_judge input (one JSON object on stdin: candidate_answer, expected_messages, config, ...) and prints one
# JSON object {score, hits, misses, reasoning} on stdout.
#
# It checks that the decision of the candidate equals the expected decision (the last expected message whose content
# has a decision) and that the reasons agree with it: a REVIEW needs at least one reason, a CLEAR none. With
# config.require_reasons false only the decision counts. (No single quote in this file: test/e2e inlines it as
# python3 -c inside single quotes of the shell.)
import json
import sys


def expected_decision(payload):
    decision = ""
    for message in payload.get("expected_messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and isinstance(content.get("decision"), str) and content["decision"]:
            decision = content["decision"]
    return decision


def judge(payload):
    hits, misses = [], []
    want = expected_decision(payload)
    if not want:
        return {"score": 0, "hits": hits, "misses": ["no expected decision in expected_messages"],
                "reasoning": "Cannot judge: the case has no expected decision."}
    try:
        got = json.loads(payload.get("candidate_answer") or "")
    except ValueError:
        got = None
    if not isinstance(got, dict) or not isinstance(got.get("decision"), str) or not got["decision"]:
        return {"score": 0, "hits": hits, "misses": ["candidate answer is not JSON with a decision"],
                "reasoning": "The runner" + chr(39) + "s answer could not be read."}
    decision = got["decision"]
    reasons = got.get("reasons") if isinstance(got.get("reasons"), list) else []
    checks, passed = 1, 0
    if decision == want:
        passed += 1
        hits.append("decision matches: " + want)
    else:
        misses.append("decision mismatch: expected=%s actual=%s" % (want, decision))
    config = payload.get("config") if isinstance(payload.get("config"), dict) else {}
    if config.get("require_reasons", True) is not False:
        checks += 1
        if decision == "REVIEW" and not reasons:
            misses.append("REVIEW without reasons")
        elif decision == "CLEAR" and reasons:
            misses.append("CLEAR with %d reasons" % len(reasons))
        else:
            passed += 1
            hits.append("%d reasons consistent with %s" % (len(reasons), decision))
    reasoning = "Decision and reasons match the expectation." if not misses else "The screening output does not match the expectation."
    return {"score": passed / checks, "hits": hits, "misses": misses, "reasoning": reasoning}


def main():
    try:
        payload = json.loads(sys.stdin.buffer.read(16 << 20))
    except ValueError as err:
        sys.stderr.write("decision-check: stdin is not the code_judge JSON: %s\n" % err)
        return 1
    if not isinstance(payload, dict):
        sys.stderr.write("decision-check: stdin is not the code_judge JSON: not an object\n")
        return 1
    json.dump(judge(payload), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
