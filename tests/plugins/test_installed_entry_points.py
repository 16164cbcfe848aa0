"""plugins/installed.py lists the plugin kinds' entry points exactly as importlib.metadata does: the
same entries, in the same order, from the same distributions (name and version), on this environment
and on made-up ones (a name installed twice on sys.path, names that normalise alike, comments, a
distribution without METADATA); and it leaves a zip on sys.path to importlib.metadata."""

from __future__ import annotations

import importlib.metadata
import sys
import zipfile
from pathlib import Path

import pytest

from agentv_ci.plugins.installed import installed_entry_points, load_entry_point


def _by_importlib() -> dict[str, list[tuple[str, str, tuple[str, str] | None]]]:
    found: dict[str, list[tuple[str, str, tuple[str, str] | None]]] = {}
    everything = importlib.metadata.entry_points()
    for group in everything.groups:
        if not group.startswith("agentv_ci."):
            continue
        for ep in everything.select(group=group):
            dist = ep.dist
            origin = None if dist is None else (dist.metadata["Name"], dist.metadata["Version"])
            if origin is not None and None in origin:
                origin = None
            found.setdefault(group, []).append((ep.name, ep.value, origin))
    return found


def _by_reader() -> dict[str, list[tuple[str, str, tuple[str, str] | None]]]:
    found = installed_entry_points()
    assert found is not None
    return {group: [(p.name, p.value, p.distribution) for p in points] for group, points in found.items()}


def _dist(site: Path, dir_name: str, entry_points: str, metadata: str | None) -> None:
    info = site / dir_name
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    if metadata is not None:
        (info / "METADATA").write_text(metadata, encoding="utf-8")


def test_this_environment_is_listed_as_importlib_lists_it() -> None:
    expected = _by_importlib()
    assert expected["agentv_ci.graders"], "the built-ins are installed"
    assert _by_reader() == expected


def test_made_up_environments_are_listed_as_importlib_lists_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "Acme_Graders-1.0.dist-info",
        "# a comment\n[console_scripts]\nacme = acme:main\n\n[agentv_ci.graders]\n"
        "  shout = acme.graders:Shout  \nwhisper=acme.graders:Whisper [extra]\n"
        "[agentv_ci.targets]\necho = acme.targets:Echo\n",
        "Metadata-Version: 2.1\nName: Acme-Graders\nVersion: 1.0\nSummary: x\n\nName: not-a-header\n",
    )
    # the same normalised name again, later on sys.path: importlib.metadata takes the first only
    _dist(second, "acme.graders-2.0.dist-info", "[agentv_ci.graders]\nshout = other:Shout\n",
          "Name: acme.graders\nVersion: 2.0\n")  # fmt: skip
    _dist(second, "nometa-0.1.dist-info", "[agentv_ci.reporters]\nplain = nometa:Plain\n", None)
    _dist(second, "zeta-3.dist-info", "[agentv_ci.graders]\nzed = zeta:Zed\n", "Name: zeta\nVersion: 3\n")
    _dist(second, "alpha-3.egg-info", "[agentv_ci.graders]\nalf = alpha:Alf\n", None)
    (second / "alpha-3.egg-info" / "PKG-INFO").write_text("Name: alpha\nVersion: 3\n", encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    expected = _by_importlib()
    assert expected["agentv_ci.graders"][0] == ("shout", "acme.graders:Shout", ("Acme-Graders", "1.0"))
    assert ("shout", "other:Shout", ("acme.graders", "2.0")) not in expected["agentv_ci.graders"]
    assert _by_reader() == expected


def test_a_zip_on_sys_path_is_left_to_importlib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.0.dist-info/entry_points.txt", "[agentv_ci.graders]\nz = zipped:Z\n")
        zipped.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive)])
    assert installed_entry_points() is None


def test_entry_points_load_as_importlib_loads_them() -> None:
    for value in (
        "agentv_ci.graders.text:Contains",
        "agentv_ci.graders",
        "os.path:join",
        "json:JSONDecoder.decode [x]",
    ):
        ep = importlib.metadata.EntryPoint(name="n", value=value, group="g")
        assert load_entry_point(value) is ep.load()
    with pytest.raises(ValueError, match="not an entry point"):
        load_entry_point("not a module")
