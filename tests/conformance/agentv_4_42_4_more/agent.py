import json
import sys
from pathlib import Path

eval_id, out = sys.argv[1], sys.argv[2]
key = eval_id.split("__")[0]
CALLS = [
    {"tool": "search", "input": {"q": "x", "n": 1}, "duration_ms": 50},
    {"tool": "read", "input": {"path": "a.md"}},
    {"tool": "search", "input": {"q": "y", "opts": {"deep": True}}, "duration_ms": 20},
    {"tool": "write", "input": {"path": "b.md", "body": "hello"}},
]
answers = {
    "empty": {"text": ""},
    "uni": {"text": "Ünïcödé café — 日本語 ✓ naïve"},
    "multi": {"text": "first line\nSecond Line\nthe end"},
    "trim": {"text": "  exact value \n"},
    "num": {"text": "42"},
    "arr": {"text": ' [1, 2, {"a": null}] \n'},
    "ws": {"text": "   \n "},
    "str": {"text": '"just a string"'},
    "objtrail": {"text": '{"a": 1} trailing'},
    "fenced": {"text": 'Here:\n```json\n{"a": 1}\n```'},
    "jsstr": {"text": "price: $5.00 (USD)\ttab\\back"},
    "fa": {
        "text": json.dumps(
            {
                "name": "Widget",
                "count": 10,
                "price": 9.5,
                "tags": ["a", "b"],
                "nested": {"deep": [1, {"x": "y"}]},
                "flag": True,
                "zero": 0,
                "numstr": "10",
                "nul": None,
                "date": "2024-03-05T10:00:00Z",
            }
        )
    },
    "fatext": {"text": "not json at all"},
    "fafence": {"text": 'Sure!\n```json\n{"name": "Widget", "count": 11}\n```\nbye'},
    "traj": {
        "output": [{"role": "assistant", "content": "done", "tool_calls": CALLS}],
        "token_usage": {"input": 100, "output": 50},
        "cost_usd": 0.02,
        "duration_ms": 1200,
    },
    "trajnone": {"output": [{"role": "assistant", "content": "no tools"}]},
    "skill": {
        "output": [
            {
                "role": "assistant",
                "content": "ok",
                "tool_calls": [
                    {"tool": "Skill", "input": {"skill": "pdf-tools"}},
                    {"tool": "Read", "input": {"file_path": "/x/.claude/skills/csv-tools/SKILL.md"}},
                ],
            }
        ]
    },
    "skillnone": {"text": "no skills used"},
    "code": {"text": "The answer is 42"},
    "msgs": {
        "output": [
            {
                "role": "assistant",
                "content": "first draft",
                "tool_calls": [{"tool": "search", "input": {"n": 1}}],
            },
            {"role": "tool", "content": "tool result text"},
            {"role": "assistant", "content": "Final answer: 42"},
        ]
    },
    "fa2": {
        "text": json.dumps(
            {
                "flag": 1,
                "count": True,
                "d1": "15-JAN-2025",
                "d2": "03/05/2024",
                "d3": "2024-3-5",
                "d4": "March 5, 2024",
                "when": "2024-03-05T23:30:00Z",
                "n": "abc",
            }
        )
    },
}
answer = answers.get(key, {"text": "plain answer 42"})
if key == "flaky":  # a different answer per attempt: 0, 1, 0.5 with the trials corpus' assertions
    counter = Path(__file__).resolve().parent / f".flaky-{eval_id}"
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    answer = {"text": ["wrong", "right answer", "right", "right answer"][n % 4]}
Path(out).write_text(json.dumps(answer))
