import json

print(json.dumps({"pass": False, "checks": [{"name": "c1", "pass": True}, {"name": "c2", "pass": False}]}))
