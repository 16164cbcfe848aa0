"""Turn the reference CLI's index.jsonl into the compact expected rows (see README.md).

Usage: python make_expected.py OUT/index.jsonl > expected-agentv-4.42.4.jsonl
"""

import json
import sys


def grader(g):
    row = {k: g.get(k) for k in ("name", "type", "score", "weight", "verdict")}
    row["assertions"] = [[a.get("text"), a.get("passed")] for a in g.get("assertions", [])]
    if g.get("scores"):
        row["scores"] = [grader(c) for c in g["scores"]]
    return row


def compact(r):
    row = {k: r.get(k) for k in ("suite", "test_id", "target", "score", "execution_status")}
    if "scores" in r:
        row["scores"] = [grader(g) for g in r["scores"]]
    if "trials" in r:
        row["trials"] = [
            {"attempt": t.get("attempt"), "score": t.get("score"), "verdict": t.get("verdict")}
            for t in r["trials"]
        ]
        row["aggregation"] = r.get("aggregation")
    return row


with open(sys.argv[1], encoding="utf-8") as index:
    rows = [compact(json.loads(line)) for line in index if line.strip()]
rows.sort(key=lambda r: (r["suite"], r["test_id"]))
for row in rows:
    print(json.dumps(row, ensure_ascii=False))
