"""A small XML Schema checker for the constructs junit-10.xsd uses (no lxml/xmlschema in the venv).

It checks, for every element of a document: the element is declared, its attributes are declared,
required attributes are present, attribute values match their simple types (patterns,
nonNegativeInteger), children are among the declared refs, and text appears only in mixed or
simple-typed elements. It does not check the order or counts inside `xs:sequence`/`xs:choice`
(junit-10.xsd uses unbounded choices almost everywhere).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"


@dataclass
class ElementRule:
    attributes: dict[str, str] = field(default_factory=dict)  # name -> type
    required: set[str] = field(default_factory=set)
    children: set[str] = field(default_factory=set)
    text_allowed: bool = False


def _collect_refs(node: ET.Element) -> set[str]:
    return {el.get("ref", "") for el in node.iter(f"{XS}element") if el.get("ref")}


def load_rules(xsd: Path) -> tuple[dict[str, ElementRule], dict[str, re.Pattern[str]]]:
    root = ET.parse(xsd).getroot()
    patterns = {
        st.get("name", ""): re.compile(p.get("value", ""))
        for st in root.findall(f"{XS}simpleType")
        for p in st.iter(f"{XS}pattern")
    }
    types = {ct.get("name", ""): ct for ct in root.findall(f"{XS}complexType")}
    rules: dict[str, ElementRule] = {}
    for el in root.findall(f"{XS}element"):
        rule = ElementRule()
        type_name = el.get("type")
        complex_type = el.find(f"{XS}complexType")
        if complex_type is None and type_name in types:
            complex_type = types[type_name]
        if complex_type is None:
            rule.text_allowed = True  # xs:string
        else:
            rule.text_allowed = complex_type.get("mixed") == "true"
            rule.children = _collect_refs(complex_type)
            rule.children |= {c.get("name", "") for c in complex_type.iter(f"{XS}element") if c.get("name")}
            for attr in complex_type.iter(f"{XS}attribute"):
                name = attr.get("name", "")
                rule.attributes[name] = attr.get("type", "xs:string")
                if attr.get("use") == "required":
                    rule.required.add(name)
        rules[el.get("name", "")] = rule
    return rules, patterns


def validate(document: str, xsd: Path) -> list[str]:
    """Every problem found (empty list: valid)."""
    rules, patterns = load_rules(xsd)
    root = ET.fromstring(document)
    problems: list[str] = []

    def check(el: ET.Element, path: str) -> None:
        rule = rules.get(el.tag)
        here = f"{path}/{el.tag}"
        if rule is None:
            problems.append(f"{here}: element not declared")
            return
        for name, value in el.attrib.items():
            if name not in rule.attributes:
                problems.append(f"{here}@{name}: attribute not declared")
                continue
            kind = rule.attributes[name]
            if kind in patterns and not patterns[kind].fullmatch(value):
                problems.append(f"{here}@{name}={value!r}: does not match {kind}")
            if kind == "xs:nonNegativeInteger" and not value.isdigit():
                problems.append(f"{here}@{name}={value!r}: not a nonNegativeInteger")
        for name in rule.required - set(el.attrib):
            problems.append(f"{here}: missing required attribute {name}")
        if not rule.text_allowed and (el.text or "").strip():
            problems.append(f"{here}: text not allowed")
        for child in el:
            if child.tag not in rule.children:
                problems.append(f"{here}/{child.tag}: child not allowed here")
            check(child, here)

    check(root, "")
    return problems
