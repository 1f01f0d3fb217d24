# A code_judge for the judging fixture: logs before its JSON, crashes when the config asks it to.
payload=$(cat)
echo "judge: checking a case"
case "$payload" in
  *'"expect":"CRASH"'*) echo "judge crashed on purpose" >&2; exit 5 ;;
esac
if printf '%s' "$payload" | grep -qF '"candidate_answer":"{\"decision\":\"CLEAR\"}"'; then
  echo '{"score": 1, "hits": ["decision is CLEAR"], "misses": [], "reasoning": "matches"}'
else
  echo '{"score": 0, "hits": [], "misses": ["decision is not CLEAR"], "reasoning": "mismatch"}'
fi
