import json, sys
d = json.load(sys.stdin)
print(json.dumps({"score": 0.7, "assertions": [{"text": "has 42", "passed": "42" in d["output"]}, {"text": "short", "passed": False}], "details": {"keys": sorted(d.keys())}}))
