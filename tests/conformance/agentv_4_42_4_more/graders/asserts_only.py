import json
import sys

json.load(sys.stdin)
print(
    json.dumps(
        {
            "assertions": [
                {"text": "a", "passed": True},
                {"text": "b", "passed": False},
                {"text": "c", "passed": True},
            ]
        }
    )
)
