"""parse_yaml builds values in its one marks walk: they must equal PyYAML's own construction with
EvalYamlLoader (type-exact), and the refusals (duplicates, alias bombs, bad keys, tags) must hold."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml

from agentv_ci.errors import LoadError
from agentv_ci.loading.yaml_source import DuplicateKeys, EvalYamlLoader, parse_yaml


def typed(value: Any) -> Any:
    """A comparable form that keeps types apart (1 != 1.0 != True) and nan equal to itself."""
    if isinstance(value, dict):
        return ("dict", [(type(k).__name__, k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


DOCUMENTS = [
    "a: 1\nb: -0\nc: +5\nd: 010\ne: 0x1F\nf: 1_000\ng: 12:30\nh: 1e-3\ni: 5E2\nj: .5\nk: 1.\n",
    "a: .inf\nb: -.Inf\nc: .NaN\nd: true\ne: False\nf: yes\ng: ~\nh: null\ni:\nj: ''\nk: 'true'\n",
    "2020-01-01: date\nnull: 1\ntrue: 2\n1: 3\nt: 2020-01-01 10:00:00\n",
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nlist: &l [a, b]\nagain: *l\n",
    "defaults: &d {x: 1, y: 2}\nmerged:\n  <<: *d\n  y: 3\n",
    "a: !!str 1\nb: !!int '7'\nc: !!float '2'\nd: !!bool yes\ne: !!null x\nf: !!binary aGVsbG8=\n",
    "a: !!set {x, y}\nb: !!omap [{k: v}]\n",
    "tests:\n  - id: t1\n    input: 'hi: there'\n    assertions:\n      - {type: contains, value: x}\n",
    "- 1\n- [2, [3, {a: b}]]\n- 'quoted'\n- \"dq\\n\"\n- |\n  block\n  text\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_values_equal_pyyaml_construction_with_the_same_loader(text: str) -> None:
    expected = yaml.load(text, Loader=EvalYamlLoader)
    assert typed(parse_yaml(text, "f.yaml").data) == typed(expected)


def test_an_aliased_collection_is_one_object_as_in_pyyaml() -> None:
    data = parse_yaml("base: &b {x: [1]}\nuse: *b\n", "f.yaml").data
    assert data["use"] is data["base"]


def test_marks_point_at_values_and_keys() -> None:
    doc = parse_yaml("a:\n  b: [x, {c: 1}]\n", "f.yaml")
    assert (doc.locate(("a", "b", 1, "c")).line, doc.locate(("a", "b", 1, "c")).col) == (2, 14)
    assert (doc.locate(("a", "b"), key=True).line, doc.locate(("a", "b"), key=True).col) == (2, 3)


def test_duplicate_keys_are_all_reported_even_beside_an_explicit_tag() -> None:
    with pytest.raises(DuplicateKeys) as caught:
        parse_yaml("a: !!int nope\nb: 1\nb: 2\nc: {d: 1, d: 2}\n", "f.yaml")
    assert [(e.location.line, e.location.col) for e in caught.value.errors if e.location] == [(3, 1), (4, 11)]
    assert [e.message for e in caught.value.errors] == [
        "duplicate key 'b' (first at line 2)",
        "duplicate key 'd' (first at line 4)",
    ]


def test_bad_explicit_scalar_and_list_key_still_fail_as_pyyaml_does() -> None:
    with pytest.raises(LoadError) as caught:
        parse_yaml("a: !custom x\n", "f.yaml")
    assert "could not determine a constructor" in caught.value.message
    with pytest.raises(LoadError) as caught:
        parse_yaml("? [a, b]\n: 1\n", "f.yaml")
    assert "used as a key" in caught.value.message


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    with pytest.raises(LoadError) as caught:
        parse_yaml("\n".join(lines) + "\n", "f.yaml")
    assert "alias bomb" in caught.value.message


def test_depth_limit_holds_for_a_plain_string_leaf() -> None:
    from agentv_ci.loading.yaml_source import MAX_DEPTH

    def nested(depth: int) -> str:
        return "{a: " * depth + "leaf" + "}" * depth + "\n"

    data = parse_yaml(nested(MAX_DEPTH), "f.yaml").data
    for _ in range(MAX_DEPTH):
        data = data["a"]
    assert data == "leaf"
    with pytest.raises(LoadError) as caught:
        parse_yaml(nested(MAX_DEPTH + 1), "f.yaml")
    assert "nested too deeply" in caught.value.message


def test_integers_follow_the_core_schema_as_agentv_reads_them() -> None:
    # AgentV (JS `yaml`, core schema): 012 -> 12, 0o17 -> 15, 0x10 -> 16; 1_000 and 12:30 stay text.
    data = parse_yaml(
        "a: 012\nb: 0o17\nc: 0x10\nd: 1_000\ne: 12:30\nf: +5\ng: 007\nh: !!int 1_000\n", "f.yaml"
    ).data
    assert data == {"a": 12, "b": 15, "c": 16, "d": "1_000", "e": "12:30", "f": 5, "g": 7, "h": 1000}
    assert all(type(data[k]) is int for k in "abcfgh")
