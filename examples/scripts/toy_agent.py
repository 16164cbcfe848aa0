"""A deterministic toy agent for the examples: reads the prompt file, writes AgentV's cli output JSON.

Usage: toy_agent.py PROMPT_FILE OUTPUT_FILE EVAL_ID
Some answers are wrong on purpose so the demo shows failures next to passes.
"""

from __future__ import annotations

import json
import re
import sys

ANSWERS = {
    "capital of france": "The capital of France is Paris.",
    "capital of germany": "The capital of Germany is Munich.",  # wrong on purpose
    "capital of japan": "Tokyo is the capital of Japan.",
    "largest planet": "Jupiter is the largest planet in the solar system.",
    "boiling point": "Water boils at 100 degrees Celsius at sea level.",
    "haiku": "Silent code compiles\nTests turn green one after one\nThe build is at peace",
}


def answer(prompt: str) -> str:
    text = prompt.lower()
    match = re.search(r"(\d+)\s*([+*-])\s*(\d+)", text)
    if match:
        a, op, b = int(match.group(1)), match.group(2), int(match.group(3))
        return str(a + b if op == "+" else a * b if op == "*" else a - b)
    if "json" in text:
        return json.dumps({"name": "Ada Lovelace", "born": 1815, "field": "mathematics"})
    for key, value in ANSWERS.items():
        if key in text:
            return value
    return "I do not know."


def main() -> int:
    prompt_file, output_file = sys.argv[1], sys.argv[2]
    with open(prompt_file, encoding="utf-8") as handle:
        prompt = handle.read()
    text = answer(prompt)
    output = {
        "output": [{"role": "assistant", "content": text}],
        "token_usage": {"input": len(prompt.split()), "output": len(text.split())},
        "cost_usd": 0.0001,
    }
    with open(output_file, "w", encoding="utf-8") as handle:
        json.dump(output, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
