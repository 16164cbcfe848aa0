import json
import sys

json.load(sys.stdin)
print(json.dumps({"score": 0.3}))
