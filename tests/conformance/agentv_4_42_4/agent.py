import json, sys
eval_id, out = sys.argv[1], sys.argv[2]
answers = {
  "fa": {"text": '```json\n{"invoice": {"number": "INV-1", "total": 101.0, "date": "05/03/2024", "items": [{"amount": 10}]}, "vendor": "Acme"}\n```'},
  "traj": {"output": [{"role": "assistant", "content": "done", "tool_calls": [
      {"tool": "search", "input": {"q": "x", "n": 1}, "duration_ms": 50},
      {"tool": "read", "input": {"path": "a.md"}, "duration_ms": 500},
      {"tool": "search", "input": {"q": "y"}, "duration_ms": 20},
      {"tool": "write", "input": {"path": "b.md"}}]}],
     "token_usage": {"input": 100, "output": 50, "cached": 10}, "cost_usd": 0.02, "duration_ms": 1200},
  "code": {"text": "The answer is 42"},
  "skill": {"output": [{"role": "assistant", "content": "ok", "tool_calls": [{"tool": "Skill", "input": {"skill": "pdf-tools"}}]}]},
}
json.dump(answers.get(eval_id.split("__")[0], {"text": "plain answer"}), open(out, "w"))
