import json
print(json.dumps({"score": 0.5, "hits": ["a"], "misses": ["b"], "reasoning": "meh"}))
