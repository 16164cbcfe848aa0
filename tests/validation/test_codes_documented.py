from __future__ import annotations

import re

from agentv_ci.model.codes import CODES
from tests.conftest import REPO_ROOT


def test_every_diagnostic_code_is_documented_with_its_severity() -> None:
    text = (REPO_ROOT / "docs" / "diagnostics.md").read_text()
    documented = dict(re.findall(r"^\| `([EW]\d{3})` \| (error|warning)", text, flags=re.MULTILINE))
    assert documented == {code: severity for code, (severity, _) in CODES.items()}
