"""CITATION.cff and LICENSE at the top of the repository agree with pyproject.toml: the same version and the MIT
licence, so a citation names the release it came from. (The CFF 1.2.0 keys a reader needs are checked too:
its schema requires ``cff-version``, ``message``, ``title`` and ``authors``, and a reference's ``type``.)"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict[str, object]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert isinstance(project, dict)
    return project


def _citation() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_citation_names_the_version_pyproject_releases() -> None:
    version = _pyproject()["version"]
    cff = _citation()
    assert cff["version"] == version
    preferred = cff["preferred-citation"]
    assert isinstance(preferred, dict)
    assert preferred["version"] == version


def test_the_citation_has_the_keys_cff_1_2_0_requires() -> None:
    cff = _citation()
    assert cff["cff-version"] == "1.2.0"
    assert cff["title"] == "PDBench"
    assert cff["message"]
    assert cff["authors"] == [{"name": "PDBench contributors"}]
    preferred = cff["preferred-citation"]
    assert isinstance(preferred, dict)
    assert preferred["type"] == "software"
    assert preferred["title"] == "PDBench"
    assert preferred["authors"] == [{"name": "PDBench contributors"}]


def test_the_licence_is_the_mit_licence_pyproject_names() -> None:
    assert _pyproject()["license"] == {"text": "MIT"}
    assert _citation()["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) 2026 PDBench contributors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
