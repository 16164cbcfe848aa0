"""The spool a run takes a dataset's built tests back from: the same tests, in order, as often as
asked, with a suite's shared grader specs coming back as the same objects (what the grader and
fingerprint caches key on)."""

from __future__ import annotations

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.model.suite import Test as SuiteTest
from agentv_ci.running.spooled_tests import SpooledTests


def test_tests_come_back_equal_in_order_with_shared_grader_specs_the_same_objects() -> None:
    suite_grader = GraderSpec(type="contains", name="has-answer", config={"value": "answer"})
    tests = [
        SuiteTest(
            id=f"t{i}",
            input=[Message(role="user", content=f"question {i}")],
            graders=[GraderSpec(type="regex", name="own", config={"value": f"^{i}$"}), suite_grader],
            metadata={"n": i, "nested": {"list": [1, "two", None]}},
            location=SourceLocation("cases.jsonl", i + 1, 1),
        )
        for i in range(700)  # more than one frame
    ]
    spool = SpooledTests()
    try:
        for test in tests:
            spool.add(test)
        for _ in range(2):  # read back twice (the dependency plan reads a suite before the run)
            back = list(spool)
            assert back == tests
            assert all(test.graders[1] is suite_grader for test in back)
    finally:
        spool.close()


def test_tests_whose_specs_all_come_from_the_table_share_one_graders_list_per_run_of_them() -> None:
    first = GraderSpec(type="contains", name="a", config={"value": "a"})
    second = GraderSpec(type="contains", name="b", config={"value": "b"})
    orders = [[first], [first], [first, second], [first, second], [first], [second, first]]
    tests = [SuiteTest(id=f"t{i}", graders=list(specs)) for i, specs in enumerate(orders)]
    own = GraderSpec(type="regex", name="own", config={"value": "^x$"})
    tests.insert(2, SuiteTest(id="own", graders=[first, own]))  # an inline spec between two runs
    spool = SpooledTests()
    try:
        for test in tests:
            spool.add(test)
        back = list(spool)
    finally:
        spool.close()
    assert back == tests
    assert back[0].graders is back[1].graders
    assert back[2].graders == [first, own] and back[2].graders is not back[1].graders
    assert back[3].graders is back[4].graders and back[4].graders is not back[1].graders
    assert back[5].graders is not back[4].graders and back[6].graders is not back[5].graders
