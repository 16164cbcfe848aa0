import json
import sys

print(json.dumps({"score": 0.9, "assertions": [{"text": "x", "passed": True}]}))
sys.exit(2)
