"""The cost estimate's look into the response cache: which attempts of a job a real run would read
back from it (free, no request sent), and how long those answers are. The key is computed as the
run computes it (running/cache_keys.py); a request whose key cannot be known here (a test with a
workspace, a conversation) counts as sent."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Suite, Test
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import render_input
from agentv_ci.running.cache import ResponseCache, default_cache_dir, tracked_by_git
from agentv_ci.running.cache_keys import CacheKeys, TargetPart
from agentv_ci.running.estimate_targets import TargetFacts, TargetFactsReader

__all__ = ["CacheProbe"]


class CacheProbe:
    """`answers(...)`: per attempt, the cached answer a run would get, or None."""

    def __init__(self, directory: Path | None, reader: TargetFactsReader, watch: Sequence[str] = ()) -> None:
        chosen = (directory or default_cache_dir()).absolute()
        # a directory git tracks files in is never read by the run (running/cache.py): nor here
        self.cache = None if tracked_by_git(chosen) else ResponseCache(chosen)
        self.reader = reader
        self.keys = CacheKeys([], watch=watch)
        self._parts: dict[tuple[str, str], TargetPart] = {}
        self.hits = 0

    def _part(self, suite_path: str, facts: TargetFacts) -> TargetPart | None:
        checked = facts.checked
        config = self.reader.config(suite_path)
        if checked is None or config is None:
            return None
        key = (str(Path(suite_path).parent), facts.name)
        part = self._parts.get(key)
        if part is None:
            # what the key reads of a target: its class and its config (never its connection)
            stand_in = object.__new__(checked.cls)
            stand_in.config = checked.config
            part = self._parts[key] = self.keys.target_part(stand_in, facts.name, config)
        return part

    def answers(
        self, suite: Suite, test: Test, facts: TargetFacts, attempts: int
    ) -> list[TargetResponse | None]:
        """The cached answer of each attempt (None: a request will be sent)."""
        # lazy: the graders, `running.workspace` loaded only when `answers` runs
        from agentv_ci.grading import relative_eval_path
        from agentv_ci.running.workspace import workspace_of

        none: list[TargetResponse | None] = [None] * attempts
        if self.cache is None or workspace_of(test, suite) is not None or test.turns:
            return none
        part = self._part(suite.path, facts)
        if part is None:
            return none
        inline = getattr(facts.checked.cls if facts.checked else None, "inline_files", True)
        prompt = render_input(test.input, inline_files=inline)
        eval_path = Path(relative_eval_path(Path(suite.path)))
        found = list(none)
        for attempt in range(attempts):
            request = TargetRequest(
                test=test,
                messages=test.input,
                prompt=prompt,
                eval_path=eval_path,
                attempt=attempt,
                files=test.input_files,
            )
            key = self.keys.key(part, request, None, reads=suite.dependencies)
            found[attempt] = self.cache.peek(key) if key is not None else None
        self.hits += sum(1 for entry in found if entry is not None)
        return found
