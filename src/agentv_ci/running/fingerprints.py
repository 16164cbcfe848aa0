"""Test-definition fingerprints: a short hash of what a test asks and how it is judged.

`compare` uses them to tell "the test changed" from "the answers changed": a test whose definition
differs from the baseline's is `changed`, never a regression or an improvement.

Hashed, as canonical JSON (msgspec, sorted keys):

- the input messages as the target gets them (vars substituted); a file block by its path as written
  plus a digest of the file's bytes, so editing a referenced file changes the fingerprint;
- `criteria`, the expected output, `input_files` (path relative to the eval file + digest),
  conversation turns and their settings;
- the graders: type, config, weight, required, min_score, negate (not their names, not where they
  were written: moving a test within its file keeps its fingerprint);
- the threshold the eval file gives the test (its own, else the suite's, else 0.8; not a
  `--threshold` on the command line, which re-judges both sides of a comparison instead);
- the target: its name, provider, the fields from targets.yaml that can change an answer and
  `grader_target` (secrets, the runner's knobs such as `workers`, `max_rpm` or `timeout_seconds`,
  bookkeeping such as `pricing`, and `env:` are left out; `sources:` is not a field).

Never hashed: line numbers, absolute paths of the checkout (a base run in a temporary worktree must
agree with the head run), timestamps, attempt numbers, API keys. Not hashed either (by choice):
descriptions, tags, metadata, the repeat count and strategy (a `--repeat` change is noise handling,
not a new test), `--grader-target`, workspace setup, and the content of grader scripts and judge
prompt files named in a grader's config (their paths are hashed as written).

Cost: a few us per test x target, computed once per job as it runs (the graders' part once per
suite: they are the same objects in each of its tests).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import GraderSpec, Message, Test
from agentv_ci.running.plan import Job
from agentv_ci.running.spec_memo import BySpecs
from agentv_ci.scoring import effective_threshold
from agentv_ci.targets.config import TargetsConfig

__all__ = [
    "FINGERPRINT_LENGTH",
    "DefinitionFingerprints",
    "answer_fields",
    "definition_fingerprint",
    "target_identity",
]

FINGERPRINT_LENGTH = 16
# Part of every hashed payload: bump it when the encoding changes (every test then reads as changed
# against baselines written before, which a CHANGELOG entry must say).
_ENCODING = "agentv-ci/definition/1"
# MessagePack, not JSON: as canonical (sorted keys) and about twice as fast on floats; the bytes are
# only ever hashed.
_ENCODER = msgspec.msgpack.Encoder(order="sorted", enc_hook=str)
_SECRET_KEYS = frozenset(
    {"api_key", "apikey", "key", "secret", "token", "password", "passwd", "authorization", "auth",
     "headers", "cookie", "cookies", "credentials"}
)  # fmt: skip
_SECRET_SUFFIXES = ("_key", "_secret", "_token", "_password", "_credentials")
# Fields that cannot change an answer (docs/gates.md lists them): the runner's knobs (how a target
# is called: retries, timeouts, rate limits, connections), bookkeeping (prices, recorded costs,
# attribution headers) and `env:`. Env values are the agent's configuration, like its code: often
# machine-specific (`${{ VAR }}`) and, when unused, impossible to tell apart; a change to them that
# lowers scores is a regression for the gate to catch, not a different test. The response cache
# keys on all of them.
_NOT_ANSWER_KEYS = frozenset(
    {"workers", "max_retries", "retries", "timeout", "timeout_ms", "timeout_seconds", "request_timeout",
     "retry_initial_delay_ms", "retry_max_delay_ms", "max_connections", "max_rpm", "max_tpm",
     "max_concurrency", "pricing", "cost_usd", "token_usage", "delay_ms", "keep_temp_files",
     "site_url", "app_name", "env"}
)  # fmt: skip
_GRADER_LOCATION_KEYS = ("location", "config_locations", "written_type", "name")
_Encoded = tuple[msgspec.Raw, msgspec.Raw]


def _is_secret(key: str) -> bool:
    lowered = key.lower()
    return lowered in _SECRET_KEYS or lowered.endswith(_SECRET_SUFFIXES)


def target_identity(name: str, targets: TargetsConfig | None) -> list[Any]:
    """The target as it bears on answers: name, provider, the fields that can change one and
    `grader_target` (aliases followed). A target not declared in targets.yaml (e.g. the built-in
    `mock`) is its name alone."""
    if targets is None or name not in targets.targets:
        return [name]
    try:
        definition = targets.resolve(name)
    except ConfigError:  # a broken alias: the run reports it; the name still identifies the target
        return [name]
    return [
        name,
        definition.name,
        definition.provider,
        answer_fields(definition.fields),
        definition.grader_target,
    ]


def answer_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A target's fields that can change an answer: no secrets, runner knobs or bookkeeping."""
    return {
        key: value for key, value in fields.items() if not _is_secret(key) and key not in _NOT_ANSWER_KEYS
    }


def _member(raw: Any) -> Any:
    """A composite member (the builtins of a `GraderSpec`) without names and source locations."""
    if not isinstance(raw, dict):
        return raw
    member = {k: v for k, v in raw.items() if k not in _GRADER_LOCATION_KEYS}
    config = member.get("config")
    if isinstance(config, dict) and isinstance(config.get("assertions"), list):
        member["config"] = {**config, "assertions": [_member(m) for m in config["assertions"]]}
    return member


def _graders(specs: list[GraderSpec]) -> list[tuple[Any, ...]]:
    """Type, weight, required, min_score, negate and config of each grader (composite members alike)."""
    out: list[tuple[Any, ...]] = []
    for spec in specs:
        config = spec.config
        if spec.type == "composite" and isinstance(config.get("assertions"), list):
            config = {**config, "assertions": [_member(m) for m in config["assertions"]]}
        out.append((spec.type, spec.weight, spec.required, spec.min_score, spec.negate, config))
    return out


class DefinitionFingerprints:
    """Fingerprints for one run (the runner asks once per job: its attempts share it); file digests
    and target identities are computed once per run. Nothing is kept per job."""

    def __init__(self) -> None:
        self._targets: dict[tuple[Path | None, str, str | None], msgspec.Raw] = {}
        self._files: dict[str, str | None] = {}
        self._named: dict[tuple[str, str], str | None] = {}
        self._grader_parts: BySpecs[_Encoded] = BySpecs()  # the graders' encoded part, per eval path
        # The last job's target (its config and name objects, held) and its identity: a suite's jobs
        # mostly run against the one target.
        self._last_config: TargetsConfig | None = None
        self._last_target: str | None = None  # never a target: the first job looks it up
        self._last_identity = msgspec.Raw(b"")
        self._last_specs: list[GraderSpec] | None = None
        self._last_path = ""
        self._last_parts: _Encoded = (msgspec.Raw(b""), msgspec.Raw(b""))

    def of_job(self, job: Job, targets: TargetsConfig | None) -> str:
        """The job's test with the threshold its eval file gives it: a `--threshold` on the command
        line is how a run judges, not a new test (a baseline recorded without it stays comparable)."""

        declared = effective_threshold(None, job.test, job.suite)
        return self._fingerprint(job.test, job.suite.path, declared, job.target, targets)

    def fingerprint(
        self, test: Test, *, eval_path: str, threshold: float, target: str, targets: TargetsConfig | None
    ) -> str:
        """`test` against `target` with `threshold`; `eval_path` is the test's eval file (input files
        are hashed by their path relative to its directory)."""
        return self._fingerprint(test, eval_path, threshold, target, targets)

    def _fingerprint(
        self, test: Test, eval_path: str, threshold: float, target: str, targets: TargetsConfig | None
    ) -> str:
        if targets is self._last_config and target is self._last_target:  # as the job before
            identity = self._last_identity
        else:
            key = (
                (targets.path, target, targets.aliased.get(target))
                if targets is not None
                else (None, target, None)
            )
            known = self._targets.get(key)
            if known is None:
                known = self._targets[key] = msgspec.Raw(_ENCODER.encode(target_identity(target, targets)))
            identity = known
            self._last_config, self._last_target, self._last_identity = targets, target, identity
        specs = test.graders
        if specs is self._last_specs and eval_path == self._last_path:  # the spool's shared list
            graders, files = self._last_parts
        else:
            graders, files = self._grader_parts_of(specs, eval_path)
        messages = self._messages
        payload = _ENCODER.encode(
            (
                _ENCODING,
                identity,
                threshold,
                messages(test.input),
                test.criteria,
                messages(test.expected_output),
                graders,
                files,
                self._extras(test, eval_path) if test.input_files or test.mode or test.turns else None,
            )
        )
        return hashlib.sha256(payload).hexdigest()[:FINGERPRINT_LENGTH]

    # ------------------------------------------------------------------ parts
    def _grader_parts_of(self, specs: list[GraderSpec], eval_path: str) -> _Encoded:
        """The graders and the digests of the files they name, each encoded (the bytes they have
        inline in the payload)."""
        if specs is self._last_specs and eval_path == self._last_path:  # the spool's shared list
            return self._last_parts
        parts = self._grader_parts.of((eval_path,), specs, lambda: self._encoded_graders(specs, eval_path))
        # Held, so `is` above is never another list's identity (test graders are not changed in place)
        self._last_specs, self._last_path, self._last_parts = specs, eval_path, parts
        return parts

    def _encoded_graders(self, specs: list[GraderSpec], eval_path: str) -> _Encoded:
        files = self._grader_files(specs, eval_path) if specs else None
        return msgspec.Raw(_ENCODER.encode(_graders(specs))), msgspec.Raw(_ENCODER.encode(files))

    def _extras(self, test: Test, eval_path: str) -> tuple[Any, ...]:
        """Input files (path relative to the eval file + digest) and conversation turns."""
        eval_dir = os.path.dirname(eval_path)
        files = [(self._relative(f, eval_dir), self._digest(f)) for f in test.input_files]
        turns = [
            (self._messages(t.input), self._messages(t.expected_output), _graders(t.graders))
            for t in test.turns
        ]
        return (files, test.mode, test.aggregation, test.on_turn_failure, test.window_size, turns)

    def _grader_files(self, specs: list[GraderSpec], eval_path: str) -> list[Any]:
        """Digests of the files the graders' configs name (scripts, prompt files), in config order."""
        eval_dir = os.path.dirname(eval_path)
        digests: list[Any] = []
        for spec in specs:
            for value in spec.config.values():
                for item in value if isinstance(value, list) else (value,):
                    if isinstance(item, str):
                        digest = self._named_file(eval_dir, item)
                        if digest is not None:
                            digests.append(digest)
        return digests

    def _named_file(self, eval_dir: str, value: str) -> str | None:
        """The digest of `value` when it names an existing file next to the eval file (cached: the
        same grader repeats across every test of a suite)."""
        key = (eval_dir, value)
        if key not in self._named:
            digest = None
            if 0 < len(value) <= 300 and "\n" not in value and "{" not in value:
                path = os.path.join(eval_dir, value.removeprefix("file://"))
                if os.path.isfile(path):
                    digest = self._digest(path)
            self._named[key] = digest
        return self._named[key]

    def _messages(self, messages: list[Message]) -> list[Any]:
        """The messages as encoded, with file blocks made portable (path as written + content digest).
        Messages without file blocks are encoded as they are (the common, fast case)."""
        for message in messages:
            if type(message.content) is list:
                break
        else:
            return messages  # encoded as they are
        return [
            msgspec.structs.replace(m, content=[self._block(b) for b in m.content])
            if isinstance(m.content, list)
            else m
            for m in messages
        ]

    def _block(self, block: Any) -> Any:
        if not isinstance(block, dict) or block.get("type") != "file" or "path" not in block:
            return block
        portable = {k: v for k, v in block.items() if k != "path"}
        portable["sha256"] = self._digest(str(block["path"]))
        return portable

    def _digest(self, path: str) -> str | None:
        if path not in self._files:
            try:
                self._files[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            except OSError:
                self._files[path] = None  # missing: the run reports it; the fingerprint stays stable
        return self._files[path]

    @staticmethod
    def _relative(path: str, eval_dir: str) -> str:
        try:
            return Path(os.path.relpath(path, eval_dir)).as_posix()
        except ValueError:  # another drive (Windows)
            return Path(path).name


def definition_fingerprint(
    test: Test,
    *,
    eval_path: str,
    threshold: float,
    target: str,
    targets: TargetsConfig | None = None,
) -> str:
    """The fingerprint of `test` run against `target` with `threshold` (16 hex characters).

    `eval_path` is the test's eval file (input file paths are hashed relative to its directory);
    `targets` is the targets.yaml the run reads (None: the target is identified by its name only).
    """
    return DefinitionFingerprints().fingerprint(
        test, eval_path=eval_path, threshold=threshold, target=target, targets=targets
    )
