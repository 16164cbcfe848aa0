import json
import sys

sys.stderr.write("warning only\n")
print(json.dumps({"score": 1}))
