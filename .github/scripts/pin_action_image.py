"""Rewrite action.yml to run a published image by digest (the release workflow's last job).

    python3 .github/scripts/pin_action_image.py action.yml ghcr.io/owner/repo sha256:<64 hex>

On main, action.yml builds the image from the Dockerfile (`image: Dockerfile`), which keeps
`uses: ./` working for tests and for act. A release commit replaces that one line with
`image: docker://<image>@<digest>`, so `uses: owner/repo@v1` pulls the released image instead of
building it. Anything unexpected (no such line, two of them, a malformed image or digest) is an
error with exit 2, never a partial rewrite. Standard library only: it runs on a bare runner.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

BUILD_LINE = re.compile(r"^(?P<indent>[ ]+)image:[ ]*['\"]?Dockerfile['\"]?[ ]*$")
IMAGE = re.compile(r"^ghcr\.io/[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


def pin(text: str, image: str, digest: str) -> str:
    if not IMAGE.match(image):
        raise ValueError(f"image {image!r} is not ghcr.io/<owner>/<repo> in lower case")
    if not DIGEST.match(digest):
        raise ValueError(f"digest {digest!r} is not sha256:<64 lower-case hex digits>")
    lines = text.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if BUILD_LINE.match(line.rstrip("\n"))]
    if len(found) != 1:
        raise ValueError(f"expected one `image: Dockerfile` line under runs:, found {len(found)}")
    [index] = found
    match = BUILD_LINE.match(lines[index].rstrip("\n"))
    assert match is not None
    lines[index] = f"{match['indent']}image: docker://{image}@{digest}\n"
    return "".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: pin_action_image.py ACTION_YML IMAGE DIGEST", file=sys.stderr)
        return 2
    path, image, digest = Path(argv[0]), argv[1], argv[2]
    try:
        pinned = pin(path.read_text(encoding="utf-8"), image, digest)
    except (OSError, ValueError) as error:
        print(f"error: {path}: {error}", file=sys.stderr)
        return 2
    path.write_text(pinned, encoding="utf-8")
    print(f"{path}: image: docker://{image}@{digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
