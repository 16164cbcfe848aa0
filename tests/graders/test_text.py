from __future__ import annotations

import pytest

from tests.graders.contexts import grade

HUGE = "x" * 2_000_000 + " needle"

CASES = [
    # (type, config, output, expected score)
    ("contains", {"value": "Paris"}, "The capital is Paris.", 1.0),
    ("contains", {"value": "paris"}, "The capital is Paris.", 0.0),
    ("contains", {"value": "Paris"}, "", 0.0),
    ("contains", {"value": "café"}, "un café ☕", 1.0),
    ("contains", {"value": 42}, "the answer is 42", 1.0),
    ("contains", {"value": "needle"}, HUGE, 1.0),
    ("icontains", {"value": "PARIS"}, "the capital is paris", 1.0),
    ("icontains", {"value": "ÉCOLE"}, "une école", 1.0),
    ("icontains", {"value": "berlin"}, "Paris", 0.0),
    ("contains-any", {"value": ["red", "blue"]}, "a blue sky", 1.0),
    ("contains-any", {"value": ["red", "blue"]}, "a grey sky", 0.0),
    ("contains-all", {"value": ["red", "blue"]}, "red and blue", 1.0),
    ("contains-all", {"value": ["red", "blue"]}, "red only", 0.0),
    ("contains-all", {"value": ["Red"]}, "red", 0.0),
    ("icontains-any", {"value": ["RED", "BLUE"]}, "Blue!", 1.0),
    ("icontains-any", {"value": ["RED", "BLUE"]}, "", 0.0),
    ("icontains-all", {"value": ["RED", "BLUE"]}, "red, Blue", 1.0),
    ("icontains-all", {"value": ["RED", "BLUE"]}, "red", 0.0),
    ("starts-with", {"value": "  Hello"}, "\n Hello world  ", 1.0),
    ("starts-with", {"value": "world"}, "Hello world", 0.0),
    ("ends-with", {"value": "done. "}, "all done.\n", 1.0),
    ("ends-with", {"value": "done"}, "done already", 0.0),
    ("equals", {"value": "42"}, "  42\n", 1.0),
    ("equals", {"value": "42"}, "42.0", 0.0),
    ("equals", {"value": "42"}, "", 0.0),
    ("regex", {"value": r"\d{3}-\d{4}"}, "call 555-1234 now", 1.0),  # a search, not a full match
    ("regex", {"value": "^hello"}, "Hello there", 0.0),
    ("regex", {"value": "^hello", "flags": "i"}, "Hello there", 1.0),
    ("regex", {"value": "^second", "flags": "m"}, "first\nsecond", 1.0),
    ("regex", {"value": "^second"}, "first\nsecond", 0.0),
    ("regex", {"value": "a.b", "flags": "s"}, "a\nb", 1.0),
    ("regex", {"value": "a.b"}, "a\nb", 0.0),
    ("regex", {"value": "x", "flags": "gu"}, "xyz", 1.0),  # g/u/d are no-ops for one test()
    ("regex", {"value": "x", "flags": "y"}, "axyz", 0.0),  # sticky: JS test() matches at index 0 only
    ("regex", {"value": "a", "flags": "gy"}, "abc", 1.0),
    ("regex", {"value": "x", "flags": "d"}, "axyz", 1.0),
    ("regex", {"value": r"(?<year>\d{4})-\d\d"}, "on 2024-05", 1.0),  # JS named group
    ("regex", {"value": "日本"}, "日本語", 1.0),
    ("is-json", {}, '{"a": 1}', 1.0),
    ("is-json", {}, '"3"', 1.0),
    ("is-json", {}, "[1, 2]", 1.0),
    ("is-json", {}, "3", 1.0),
    ("is-json", {}, "{'a': 1}", 0.0),
    ("is-json", {}, "```json\n{}\n```", 0.0),
    ("is-json", {}, "", 0.0),
]


@pytest.mark.parametrize(("type_", "config", "output", "expected"), CASES)
def test_text_graders_score_like_agentv(type_: str, config: dict, output: str, expected: float) -> None:
    result = grade(type_, output, **config)
    assert result.error is None
    assert result.score == expected
    assert result.verdict == ("pass" if expected == 1.0 else "fail")
    assert len(result.assertions) == 1
    assert result.assertions[0].passed is (expected == 1.0)


@pytest.mark.parametrize(
    ("type_", "config", "message"),
    [
        ("contains", {}, "`value` must be a non-empty string"),
        ("contains", {"value": ""}, "`value` must be a non-empty string"),
        ("contains", {"value": ["a", "b"]}, "`value` must be a non-empty string"),
        ("contains-any", {"value": []}, "non-empty list"),
        ("contains-all", {"value": ["a", ""]}, "non-empty list"),
        ("regex", {"value": "("}, "invalid regular expression"),
        ("regex", {"value": "a", "flags": "x"}, "unknown regex flag 'x'"),
        ("regex", {"value": "a", "flags": "gg"}, "duplicate regex flag 'g'"),
    ],
)
def test_bad_text_config_is_a_grader_error_not_a_score(type_: str, config: dict, message: str) -> None:
    result = grade(type_, "anything", **config)
    assert result.error is not None and message in result.error
    assert result.score == 0.0 and result.verdict == "fail"


def test_failure_evidence_quotes_the_answer() -> None:
    result = grade("equals", "forty-two", value="42")
    assert result.assertions[0].text == 'Output does not equal "42"'
    assert result.assertions[0].evidence == "forty-two"


def test_negate_flips_score_verdict_and_assertions() -> None:
    from agentv_ci.model.suite import GraderSpec
    from tests.graders.contexts import make_ctx, run_spec

    spec = GraderSpec(type="contains", name="no-secret", negate=True, config={"value": "password"})
    leaked = run_spec(spec, make_ctx("the password is hunter2"))
    assert (leaked.score, leaked.verdict, leaked.assertions[0].passed) == (0.0, "fail", False)
    assert leaked.assertions[0].evidence == "[Negated]"
    clean = run_spec(spec, make_ctx("I can't share that"))
    assert (clean.score, clean.verdict, clean.assertions[0].passed) == (1.0, "pass", True)


def test_a_negated_contains_shows_what_it_found_in_its_place() -> None:
    from agentv_ci.model.suite import GraderSpec
    from tests.graders.contexts import make_ctx, run_spec

    answer = "a" * 500 + " the password is hunter2 " + "b" * 500
    spec = GraderSpec(type="contains", name="no-secret", negate=True, config={"value": "password"})
    [check] = run_spec(spec, make_ctx(answer)).assertions
    assert check.expected == 'not "password"'
    assert check.actual == '…"' + "a" * 35 + " the password is hunter2 " + "b" * 28 + '"…'


@pytest.mark.parametrize(
    ("type_", "config", "output", "expected", "actual"),
    [
        ("contains", {"value": "Paris"}, "Lyon\nis it", '"Paris"', '"Lyon\\nis it"'),
        ("icontains-all", {"value": ["RED", "BLUE"]}, "red", '["BLUE"]', '"red"'),
        ("contains-any", {"value": ["red", "blue"]}, "grey", '["red", "blue"]', '"grey"'),
        ("equals", {"value": " 42 "}, "forty-two\n", '"42"', '"forty-two"'),
        ("starts-with", {"value": "Hello"}, "Bye", '"Hello"', '"Bye"'),
        ("regex", {"value": "^\\d+$", "flags": "m"}, "none", "/^\\d+$/m", '"none"'),
    ],
)
def test_a_failed_text_check_carries_expected_and_actual(
    type_: str, config: dict, output: str, expected: str, actual: str
) -> None:
    [check] = grade(type_, output, **config).assertions
    assert (check.passed, check.expected, check.actual) == (False, expected, actual)


def test_expected_and_actual_are_bounded() -> None:
    [check] = grade("equals", "y" * 10_000, value="x" * 10_000).assertions
    assert check.expected is not None and check.actual is not None
    assert len(check.expected) <= 300 and len(check.actual) <= 300 and "chars cut]" in check.actual


@pytest.mark.parametrize(
    ("type_", "value", "shown_value"),
    [
        ("contains", "tok-Late0123456789abcdef", '"***"'),
        ("icontains", "tok-Late0123456789abcdef", '"***"'),
        ("equals", " tok-Late0123456789abcdef ", '"***"'),
        ("starts-with", "tok-Late0123456789abcdef", '"***"'),
        ("contains-all", ["tok-Late0123456789abcdef", "x"], '["***", "x"]'),
        ("regex", "tok-Late0123456789abcdef", "/***/"),
    ],
)
def test_a_secret_registered_after_the_grader_was_built_is_masked_in_expected(
    type_: str, value: object, shown_value: str
) -> None:
    """The expected text is built once per grader while the run knows no secret (issue 31): a secret
    registered later (a target's `.env`, a token) must still be masked from then on, and forgetting it
    shows the value again."""
    from agentv_ci.model.suite import GraderSpec
    from agentv_ci.security.redaction import SECRETS, register_secret
    from tests.graders.contexts import make_ctx, run_spec

    spec = GraderSpec(type=type_, name="late-secret", config={"value": value})
    before = run_spec(spec, make_ctx("no token here")).assertions[0].expected
    assert before is not None and "tok-Late" in before  # built and shown before any secret
    register_secret("tok-Late0123456789abcdef")
    assert run_spec(spec, make_ctx("no token here")).assertions[0].expected == shown_value
    SECRETS.clear()
    assert run_spec(spec, make_ctx("no token here")).assertions[0].expected == before


def test_an_answer_shown_before_a_secret_was_registered_is_masked_once_one_is() -> None:
    """The same answer, shown by several graders of a test, is quoted once while the run knows no
    secret (issue 31); the answer shown again after a secret was registered is masked, and an
    answer equal in value but another string is still quoted from its own text."""
    from agentv_ci.graders.outcome import shown
    from agentv_ci.security.redaction import SECRETS, register_secret

    answer = "the key is tok-Shown0123456789abcdef"
    first = shown(answer)
    assert first == '"the key is tok-Shown0123456789abcdef"'
    assert shown(answer) is first  # the second grader's quote is the first one's
    register_secret("tok-Shown0123456789abcdef")
    try:
        assert shown(answer) == '"the key is ***"'
    finally:
        SECRETS.clear()
    other = "".join(["line\n", "two"])
    assert shown(other) == '"line\\ntwo"'
    assert shown("".join(["line\n", "two"])) == '"line\\ntwo"'
    assert shown(other, 5) != shown(other)  # another limit is never answered from the memo
