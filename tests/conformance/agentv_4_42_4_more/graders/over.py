import json

print(json.dumps({"score": 1.7}))
