"""agentv-ci and the in-repo plugins installed as a user installs them: wheels built from the sources,
installed (not editable) into a fresh virtual environment.

- Our wheels are built once per test session, from copies of the sources (nothing is written in the
  checkout), with this environment's setuptools (`--no-build-isolation`: no network).
- Third-party dependencies come from a wheelhouse kept between sessions in the user's cache dir,
  downloaded once (`pip download`) and again only when a dependency list changes.
- The venv is built once per session however many xdist workers use it (tests/session_once.py);
  a test that installs into it takes it alone (`fresh_venv_to_change`), the others share it.
- The fresh venv has no pip of its own: this environment's pip installs into it (`pip --python`),
  with `--no-index`, so an install never reaches the network.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGIN_DIRS = [REPO / "plugins" / name for name in ("text-stats-grader", "jsonschema-grader", "html-report")]
TEST_REQUIREMENTS = ["pytest>=8"]
# Downloaded too, installed on demand: `pip install ./some-plugin` inside the venv (docs/plugins.md).
BUILD_REQUIREMENTS = ["pip", "setuptools>=77"]


def _pip(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def build_wheels(sources: Sequence[Path], out: Path, scratch: Path) -> list[Path]:
    """A wheel of each source tree (its pyproject.toml, README.md and src/ copied to `scratch` first)."""
    copies = []
    for source in sources:
        copy = scratch / source.name
        copy.mkdir(parents=True)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(source / name, copy / name)
        shutil.copytree(
            source / "src", copy / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__")
        )
        copies.append(str(copy))
    _pip("wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), *copies)
    return sorted(out.glob("*.whl"))


def dependency_requirements() -> list[str]:
    """Every third-party requirement of agentv-ci and the plugins, plus pytest for their tests and
    pip and setuptools for building a plugin inside the venv."""
    requirements: set[str] = {*TEST_REQUIREMENTS, *BUILD_REQUIREMENTS}
    for pyproject in [REPO / "pyproject.toml", *(d / "pyproject.toml" for d in PLUGIN_DIRS)]:
        for requirement in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
            if not requirement.startswith("agentv-ci"):
                requirements.add(requirement)
    return sorted(requirements)


def wheelhouse(cache: Path) -> Path:
    """A directory of wheels for `dependency_requirements()`, downloaded when the list changes."""
    requirements = dependency_requirements()
    key = hashlib.sha256("\n".join([sys.version, *requirements]).encode()).hexdigest()[:16]
    house = cache / "wheelhouse"
    stamp = house / f".complete-{key}"
    if not stamp.exists():
        house.mkdir(parents=True, exist_ok=True)
        # Several tests (and xdist workers, and sessions) ask for it: one downloads, the others wait.
        with (house / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not stamp.exists():
                _pip("download", "--only-binary=:all:", "--dest", str(house), *requirements, timeout=900)
                stamp.touch()
    return house


@dataclass(frozen=True)
class FreshVenv:
    """A virtual environment with agentv-ci and the plugins installed from wheels."""

    root: Path
    wheels: Path
    house: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The process environment of a shell in the venv (its bin first on PATH, no PYTHONPATH)."""
        env = {
            k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "OPENAI_API_KEY")
        }
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.root)
        env.update(extra or {})
        return env

    def run(
        self, *args: str, cwd: Path, timeout: float = 300, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """A program of the venv (`agentv-ci`, `python`, ...) run with its environment."""
        program = str(self.bin / args[0])
        return subprocess.run(
            [program, *args[1:]], cwd=cwd, env=self.env(env), capture_output=True, text=True, timeout=timeout
        )

    def offline_pip_env(self) -> dict[str, str]:
        """Environment variables that make the venv's own pip (once installed) use only local wheels."""
        return {
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": f"{self.wheels} {self.house}",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }

    def install(self, *requirements: str, find_links: Sequence[Path] = ()) -> None:
        links = [
            arg for path in (self.wheels, self.house, *find_links) for arg in ("--find-links", str(path))
        ]
        _pip("--python", str(self.python), "install", "--quiet", "--no-index", *links, *requirements)


@contextmanager
def venv_lock(venv: FreshVenv, *, exclusive: bool) -> Iterator[None]:
    """Shared while a test runs programs of the venv, exclusive while one installs into it: the venv
    is shared by the xdist workers of a session (tests/session_once.py)."""
    with (venv.root.parent / "venv.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def create_fresh_venv(root: Path, wheels: Path, house: Path) -> FreshVenv:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    venv = FreshVenv(root, wheels, house)
    names = ["agentv-ci", "agentv-ci-text-stats-grader", "agentv-ci-jsonschema", "agentv-ci-html-report"]
    venv.install(*names, *TEST_REQUIREMENTS)
    return venv
