import json
import sys

data = json.load(sys.stdin)
json.dump(
    {
        "score": 0.25,
        "assertions": [
            {
                "text": "agg saw "
                + ",".join(sorted(data.get("results", {}) if isinstance(data.get("results"), dict) else [])),
                "passed": True,
            }
        ],
    },
    sys.stdout,
)
