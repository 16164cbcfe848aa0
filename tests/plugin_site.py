"""Plugin distributions "installed" the way pip leaves them: a `*.dist-info` directory with METADATA
and `entry_points.txt` next to the modules, in a directory put on PYTHONPATH. Every check runs in a
fresh subprocess, so no entry-point cache of the test process plays a part.

`fake-agentv-plugins 0.3` holds one good plugin of each config style and one plugin per way of
breaking the contract; `other-agentv-plugins 1.2` claims a name the first one also claims.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from tests.cli_helpers import run_cli

FAKE_PLUGINS = '''
import msgspec

from agentv_ci.api import GraderResult, Message, TargetResponse, pass_fail_result


class LimitsConfig(msgspec.Struct):
    max_words: int


class Limits:
    """A good grader with a msgspec Config (a required field)."""

    api_version = "1.0"
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        self.spec, self.config = spec, config

    async def grade(self, ctx):
        words = len(ctx.response.text.split())
        return pass_fail_result(self.spec, words <= self.config.max_words, f"{words} words")


class Pattern:
    """A good grader with a JSON Schema config (closed: additionalProperties false)."""

    api_version = "1.0"
    config_schema = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "min_count": {"type": "integer", "minimum": 1},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, spec, config, *, base_dir):
        self.spec, self.config = spec, config

    async def grade(self, ctx):
        count = ctx.response.text.count(self.config["pattern"])
        return pass_fail_result(self.spec, count >= self.config.get("min_count", 1), f"{count} found")


class SyncGrade:
    api_version = "1.0"
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        pass

    def grade(self, ctx):  # not async
        return None


class NoContext:
    api_version = "1.0"
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self):  # no ctx
        return None


class WrongInit:
    api_version = "1.0"
    Config = LimitsConfig

    def __init__(self, spec):
        pass

    async def grade(self, ctx):
        return None


class FutureApi:
    api_version = "2.0"
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self, ctx):
        return None


class Unversioned:
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self, ctx):
        return None


class BadSchema:
    api_version = "1.0"
    config_schema = {"type": "object", "properties": {"n": {"type": "integr"}}}

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self, ctx):
        return None


class Shout:
    api_version = "1.0"
    Config = LimitsConfig

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self, ctx):
        return None


class EchoConfig(msgspec.Struct):
    prefix: str = ""
    repeat: int = 1


class Echo:
    """A good target with a msgspec Config."""

    api_version = "1.0"
    Config = EchoConfig

    def __init__(self, name, config, *, base_dir):
        self.config = config

    async def invoke(self, request):
        text = self.config.prefix + request.prompt * self.config.repeat
        return TargetResponse(text=text, messages=[Message(role="assistant", content=text)])

    async def aclose(self):
        return None


class StrictModel:
    """A good target with a closed JSON Schema config."""

    api_version = "1.0"
    config_schema = {
        "type": "object",
        "properties": {"model": {"type": "string"}, "temperature": {"type": "number"}},
        "required": ["model"],
        "additionalProperties": False,
    }

    def __init__(self, name, config, *, base_dir):
        self.config = config

    async def invoke(self, request):
        return TargetResponse(text=self.config.get("model", ""))

    async def aclose(self):
        return None


class AsyncWrite:
    api_version = "1.0"

    async def write(self, summary, options):
        return None
'''

OTHER_PLUGINS = """
import msgspec


class Shout:
    api_version = "1.0"

    class Config(msgspec.Struct):
        pass

    def __init__(self, spec, config, *, base_dir):
        pass

    async def grade(self, ctx):
        return None
"""

FAKE_ENTRY_POINTS = """\
[agentv_ci.graders]
limits = fake_plugins:Limits
pattern = fake_plugins:Pattern
broken-import = fake_missing_module:Grader
sync-grade = fake_plugins:SyncGrade
no-context = fake_plugins:NoContext
wrong-init = fake_plugins:WrongInit
future-api = fake_plugins:FutureApi
unversioned = fake_plugins:Unversioned
bad-schema = fake_plugins:BadSchema
shout = fake_plugins:Shout

[agentv_ci.targets]
echo-plugin = fake_plugins:Echo
strict-model = fake_plugins:StrictModel
grader-as-target = fake_plugins:Limits

[agentv_ci.reporters]
async-write = fake_plugins:AsyncWrite
"""


def _distribution(site: Path, name: str, version: str, entry_points: str) -> None:
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text(entry_points)


def install_distribution(
    site: Path, name: str, version: str, *, module: str, source: str, entry_points: str
) -> Path:
    """One more distribution in `site`: `module`.py holding `source`, and its entry points."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    _distribution(site, name, version, entry_points)
    return site


def install_fake_plugins(site: Path) -> Path:
    """Both fake distributions in `site`; returns `site`."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "fake_plugins.py").write_text(textwrap.dedent(FAKE_PLUGINS))
    (site / "other_plugins.py").write_text(textwrap.dedent(OTHER_PLUGINS))
    _distribution(site, "fake-agentv-plugins", "0.3", FAKE_ENTRY_POINTS)
    _distribution(site, "other-agentv-plugins", "1.2", "[agentv_ci.graders]\nshout = other_plugins:Shout\n")
    return site


def run_with_site(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m agentv_ci ARGS` with `site` on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    return run_cli(*args, cwd=cwd, env=env, timeout=120)
