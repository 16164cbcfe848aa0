"""The spool a run takes a dataset's built tests back from: the same tests, in order, as often as
asked, with a suite's shared grader specs coming back as the same objects (what the grader and
fingerprint caches key on)."""

from __future__ import annotations

from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
from agentv_ci.loading.suite_defaults import SuiteDefaults
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


def test_plain_tests_come_back_from_their_rows_in_order_among_whole_tests() -> None:
    spec = GraderSpec(type="contains", name="has-answer", config={"value": "answer"})
    templates = [
        PlainTemplate(SuiteDefaults(name="one", graders=[spec])),
        PlainTemplate(SuiteDefaults(name="two", metadata={"tags": ["suite"], "owner": "me"})),
    ]
    spool = SpooledTests()
    added: list[SuiteTest] = []
    try:
        for i in range(1200):  # several frames of each kind, and kinds changing within a frame's run
            template = templates[i // 100 % 2]
            if i % 7 == 3:
                test = SuiteTest(id=f"whole{i}", graders=[spec], location=SourceLocation("a.yaml", i, 5))
                spool.add(test)
            else:
                file = "a.jsonl" if i % 3 else "b.jsonl"
                row = PlainRow(f"t{i}", f"q{i}", None if i % 2 else "c", f"e{i}", {"tags": [i]}, i + 1, 1)
                test = template.build(row, SourceLocation(file, i + 1, 1))
                spool.add_plain(test, template, row)
            added.append(test)
        back = list(spool)
    finally:
        spool.close()
    assert back == added
    assert back[1].location == SourceLocation("a.jsonl", 2, 1) and back[3].id == "whole3"
    assert back[151].metadata == {"tags": ["suite", 151], "owner": "me"}
    assert back[0].graders is templates[0].graders and back[0].execution is templates[0].execution
