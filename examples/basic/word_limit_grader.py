"""A code-grader (AgentV stdin/stdout protocol): passes when the answer has at most `max_words` words."""

from __future__ import annotations

import json
import sys

payload = json.load(sys.stdin)
answer = payload.get("output") or ""
limit = int((payload.get("config") or {}).get("max_words", 12))
words = len(str(answer).split())
passed = words <= limit
print(
    json.dumps(
        {
            "score": 1.0 if passed else 0.0,
            "assertions": [{"text": f"answer has {words} words (limit {limit})", "passed": passed}],
        }
    )
)
