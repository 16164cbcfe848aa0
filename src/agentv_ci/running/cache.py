"""On-disk response cache keyed by target config + request + attempt.

The attempt is part of the key, so repeated attempts never reuse each other's answers. Entries are
one JSON file each under `<dir>/<2 hex>/<key>.json`, written atomically (rename), so concurrent runs
and crashes never leave a half-written entry.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetRequest
from agentv_ci.security.redaction import redact_bytes

DEFAULT_CACHE_DIR = Path(".agentv-ci") / "cache"
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TargetResponse)
_SECRET_FIELDS = frozenset({"api_key", "headers"})


def target_fingerprint(target: Any) -> bytes:
    """Class + config of a target instance, without secrets (a changed key must not matter)."""
    config = getattr(target, "config", None)
    data = msgspec.to_builtins(config) if isinstance(config, msgspec.Struct) else None
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in _SECRET_FIELDS}
    return _encoder.encode([type(target).__module__, type(target).__qualname__, data])


def cache_key(fingerprint: bytes, request: TargetRequest) -> str:
    payload = _encoder.encode(
        [
            request.test.suite,
            request.test.id,
            request.messages,
            request.prompt,
            request.files,
            request.attempt,
        ]
    )
    return hashlib.sha256(fingerprint + b"\0" + payload).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path = DEFAULT_CACHE_DIR) -> None:
        self.directory = directory
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> TargetResponse | None:
        try:
            data = self._path(key).read_bytes()
            response = _decoder.decode(data)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            self.misses += 1
            return None
        self.hits += 1
        return response

    def put(self, key: str, response: TargetResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(redact_bytes(_encoder.encode(msgspec.structs.replace(response, raw=None))))
        os.replace(temp, path)
