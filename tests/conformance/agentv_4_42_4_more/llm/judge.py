"""The scripted judge both the reference run and ours talk to (a FakeLlmServer responder).

Stateless except for the GARBAGE markers: `GARBAGE1` answers garbage once, `GARBAGE3` garbage until it
gets AgentV's structure-repair request.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

_seen: Counter[str] = Counter()
_lock = threading.Lock()


def _system_and_user(body: dict[str, Any]) -> tuple[str, str]:
    system = user = ""
    for message in body.get("messages", []):
        content = message.get("content")
        text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
        if message.get("role") == "system":
            system = text
        elif message.get("role") == "user":
            user = text
    return system, user


def respond(body: dict[str, Any]) -> str:
    system, user = _system_and_user(body)
    if '"satisfied"' in system:
        checks = [
            {"id": rid, "satisfied": "stock" not in outcome.lower(), "reasoning": f"checked {rid}"}
            for rid, outcome in re.findall(r"^- \[([^\]]+)\][^:]*: (.*)$", user, flags=re.M)
        ]
        if user.startswith("CUSTOMR"):
            checks = [
                {"id": "name", "satisfied": True, "reasoning": "r"},
                {"id": "stocks", "satisfied": False, "reasoning": "r"},
            ]
        return json.dumps({"checks": checks, "overall_reasoning": "ok"})
    if "integer (0-10)" in system:
        ids = re.findall(r"^### Criterion: (\S+)", user, flags=re.M)
        scores = {"warmth": 8, "tone": 4}
        return json.dumps({"checks": [{"id": i, "score": scores.get(i, 5), "reasoning": i} for i in ids]})
    if "GARBAGE9" in user or ("invalid JSON structure" in user and "GARBAGE9-reply" in user):
        return "GARBAGE9-reply: no JSON here"
    if "invalid JSON structure" in user:
        return '```json\n{"score": 0.65, "assertions": [{"text": "repaired", "passed": true}]}\n```'
    with _lock:
        _seen[user] += 1
        count = _seen[user]
    if "GARBAGE3" in user or ("GARBAGE1" in user and count == 1):
        return "The answer looks fine to me, score about 0.6"
    if user.startswith("Review the following evaluation results:"):
        return json.dumps({"score": 0.7, "verdict": "pass", "assertions": [{"text": "agg", "passed": True}]})
    if user.startswith(("CUSTOM:", "LEGACY")):
        return json.dumps({"score": 0.5, "assertions": [{"text": "half", "passed": False}]})
    return json.dumps(
        {
            "score": 0.85,
            "assertions": [
                {"text": "greets by name", "passed": True, "evidence": "Hello there, Alice"},
                {"text": "concise", "passed": True},
            ],
            "details": {"tone": "warm"},
        }
    )
