"""What the cost estimate needs to know about a target: is it a model API priced by tokens, its
model, its price row, its `max_tokens`. Read from targets.yaml without building the target (no
network, no API key); a target the estimate cannot read is left for the run to report (it fails
before anything is spent) and counted as unpriced."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.errors import AgentvCiError
from agentv_ci.model.source import SourceLocation
from agentv_ci.targets.config import TargetsConfig, load_targets
from agentv_ci.targets.factory import CheckedTarget, check_target
from agentv_ci.targets.pricing import Price, lookup_price

__all__ = ["TargetFacts", "TargetFactsReader"]


@dataclass(frozen=True)
class TargetFacts:
    """`priced`: a model API whose prompts cost tokens (`PRICED_BY_TOKENS` on the target class).
    `price` None with `priced`: no row in the price table. `fixed_cost`: the mock's `cost_usd`."""

    name: str
    priced: bool = False
    model: str | None = None
    price: Price | None = None
    max_tokens: int | None = None
    fixed_cost: float | None = None
    note: str | None = None  # why it is not priced by tokens
    checked: CheckedTarget | None = None  # its class and converted config (the response cache's key)


class TargetFactsReader:
    """Facts of each (eval file, target), read once per targets file and name."""

    def __init__(self, targets_file: Path | None, env: Mapping[str, str] | None, grader_override: str | None):
        self.targets_file = targets_file
        self.env = env
        self.grader_override = grader_override
        self._configs: dict[Path, TargetsConfig | None] = {}
        self._by_suite: dict[str, TargetsConfig | None] = {}
        self._facts: dict[tuple[int, str], TargetFacts] = {}
        self._by_name: dict[tuple[str, str, str | None], TargetFacts] = {}  # (eval path, name, alias)
        self._aliased: dict[tuple[int, str, str], TargetsConfig] = {}
        self._graders: dict[tuple[str, str, str | None], str] = {}
        self._any_priced: dict[str, bool] = {}

    def config(self, suite_path: str) -> TargetsConfig | None:
        if suite_path in self._by_suite:
            return self._by_suite[suite_path]
        directory = Path(suite_path).parent
        if directory not in self._configs:
            try:
                self._configs[directory] = load_targets(
                    Path(suite_path), explicit=self.targets_file, env=self.env
                )
            except AgentvCiError:
                self._configs[directory] = None  # the run reports it before anything is spent
        config = self._by_suite[suite_path] = self._configs[directory]
        return config

    def target(
        self, suite_path: str, name: str, alias: tuple[str, SourceLocation | None] | None = None
    ) -> TargetFacts:
        """The facts of target `name` (`alias`: the eval file's matrix `use_target` for it)."""
        known = self._by_name.get((suite_path, name, alias[0] if alias else None))
        if known is not None:
            return known
        config = self.config(suite_path)
        if config is not None and alias is not None and name not in config.targets:
            aliased = self._aliased.get((id(config), name, alias[0]))
            if aliased is None:
                aliased = self._aliased[(id(config), name, alias[0])] = config.with_alias(name, *alias)
            config = aliased
        if config is None:
            facts = TargetFacts(name, note="targets file unreadable")
        else:
            key = (id(config), name)
            facts = self._facts.get(key) or self._facts.setdefault(key, _read(config, name))
        self._by_name[(suite_path, name, alias[0] if alias else None)] = facts
        return facts

    def any_priced(self, suite_path: str) -> bool:
        """Whether any target the eval file can name (its targets file's, and `--grader-target`) is a
        model API priced by tokens; if none is, its tests need no estimate."""
        answer = self._any_priced.get(suite_path)
        if answer is None:
            config = self.config(suite_path)
            names = [*(config.targets if config is not None else ()), *filter(None, [self.grader_override])]
            answer = self._any_priced[suite_path] = any(self.target(suite_path, n).priced for n in names)
        return answer

    def grader_name(self, suite_path: str, eval_target: str, own: str | None) -> str:
        """The grader target an llm-grader of a test run against `eval_target` asks (as the grader
        caller chooses it: --grader-target > the grader's `target` > the target's `grader_target` >
        the eval target itself)."""
        if self.grader_override:
            return self.grader_override
        if own:
            return own
        key = (suite_path, eval_target, own)
        name = self._graders.get(key)
        if name is None:
            config = self.config(suite_path)
            name = eval_target
            if config is not None:
                # lazy: the grader target client (asyncio, msgspec) loaded only when `grader_name` runs
                from agentv_ci.targets.grader_caller import default_grader_target

                name = default_grader_target(config, eval_target) or eval_target
            self._graders[key] = name
        return name


def _read(config: TargetsConfig, name: str) -> TargetFacts:
    # lazy: `targets.mock` loaded only when `_read` runs
    from agentv_ci.targets.mock import MockConfig

    try:
        checked = check_target(name, config)
    except AgentvCiError:
        return TargetFacts(name, note="target not resolved")
    if checked is None or isinstance(checked.config, MockConfig):
        cost = checked.config.cost_usd if checked is not None else None
        return TargetFacts(name, fixed_cost=cost or 0.0, note="mock")
    provider = checked.definition.provider or "?"
    if not getattr(checked.cls, "PRICED_BY_TOKENS", False):
        return TargetFacts(name, note=f"not a model API ({provider})")
    settings = checked.config
    model = getattr(settings, "deployment", None) or getattr(settings, "model", None)
    model = model if isinstance(model, str) and model else None
    overrides = getattr(settings, "pricing", None)
    price = lookup_price(model or "", overrides if isinstance(overrides, Price) else None)
    limit = getattr(settings, "max_tokens", None)
    max_tokens = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None
    note = None if price is not None else f"no price for model {model or '?'}"
    return TargetFacts(
        name, priced=True, model=model, price=price, max_tokens=max_tokens, note=note, checked=checked
    )
