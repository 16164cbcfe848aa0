"""The cost estimate as text: ranges rounded outwards, names kept to one safe line."""

from __future__ import annotations

from agentv_ci.model.estimate import CostEstimate, EstimateLine, Span
from agentv_ci.model.estimate_text import budget_refusal, estimate_table, usd, usd_range


def test_a_printed_range_is_never_narrower_than_the_estimate() -> None:
    assert usd_range(Span(0.0123449, 0.02, 0.0876501)) == "$0.0123-$0.0877"
    assert usd_range(Span(1.234, 2.0, 5.671)) == "$1.23-$5.68"
    assert usd(0.0000015) == "$0.000002" and usd(0) == "$0"


def test_a_target_name_cannot_start_a_workflow_command_in_the_log() -> None:
    line = EstimateLine(
        role="target",
        target="bot\n::error::injected",
        requests=Span(1, 1, 1),
        input_tokens=Span(1, 2, 3),
        output_tokens=Span(1, 2, 3),
        model="gpt-4o\n::set-output name=x::y",
        cost_usd=Span(0.001, 0.002, 0.003),
    )
    estimate = CostEstimate([line], Span(0.001, 0.002, 0.003), "chars/4", "max_tokens and defaults")
    text = "\n".join(estimate_table(estimate))
    assert not any(row.lstrip().startswith("::") for row in text.splitlines())
    assert "target bot\\n::error::injected (gpt-4o\\n::set-output name=x::y): 1 request(s)" in text


def test_the_budget_refusal_is_one_plain_sentence() -> None:
    def line(role: str, name: str, model: str, cost: Span) -> EstimateLine:
        return EstimateLine(
            role="target" if role == "target" else "grader",
            target=name,
            requests=Span(2, 2, 2),
            input_tokens=Span(1, 2, 3),
            output_tokens=Span(1, 2, 3),
            model=model,
            cost_usd=cost,
        )

    estimate = CostEstimate(
        [
            line("target", "bot", "gpt-4o", Span(0.01, 0.02, 0.03)),
            line("grader", "judge", "o3", Span(0.002, 0.004, 0.01)),
        ],
        Span(0.012, 0.024, 0.04),
        "chars/4",
        "max_tokens and defaults",
        unpriced=["agent"],
    )
    # before: "the estimated cost is over the budget of $0.0100: even its low end, $0.0120, is
    # (estimate $0.0120-$0.0400 (expected ~$0.0240), not counting agent (no price): ...); nothing was run"
    assert budget_refusal(estimate, 0.01) == (
        "nothing was run: even the low end of the estimated cost, $0.0120, is over the budget of $0.01 "
        "(estimate $0.0120-$0.0400, expected ~$0.0240, not counting agent (no price); "
        "target bot (gpt-4o) $0.0100-$0.0300; grader target judge (o3) $0.002000-$0.0100)"
    )
