"""Reading user files: regular files only and at most 1 MB; YAML without duplicate keys, deep nesting or
alias bombs, and otherwise exactly what the ordinary safe loader reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from harness.errors import ConfigError
from harness.util.userfiles import MAX_FILE_BYTES, load_yaml, read_user_file, yaml_message


def refused(text: str) -> str:
    with pytest.raises(yaml.YAMLError) as info:
        load_yaml(text)
    return yaml_message(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: [1, 2.5, x, true, null, ~, 2024-01-02]\nc: {d: {e: 'f'}}\n",
        "base: &b {x: 1, y: 2}\nmerged: {<<: *b, y: 3}\nrefs: [*b, *b]\n",
        "multi:\n  - {<<: [{a: 1}, {b: 2}], c: 3}\n",
        "'1': a\n1: b\n",  # a string and an integer key are different keys
        "",
    ],
)
def test_well_formed_yaml_reads_as_the_safe_loader_reads_it(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_a_key_given_twice_is_named_with_both_lines() -> None:
    message = refused("run:\n  seed: 1\n  seed: 2\n")
    assert "the key 'seed' is given twice in one mapping (first at line 2)" in message and "line 3" in message
    assert "given twice" in refused("{a: 1, a: 2}")  # on one line too
    assert "given twice" in refused("1: a\n1.0: b\n")  # equal keys, written differently


def test_nesting_is_limited_to_64_levels() -> None:
    assert load_yaml("a: " + "[" * 63 + "]" * 63) is not None
    assert "nested deeper than 64 levels" in refused("a: " + "[" * 64 + "]" * 64)
    assert "nested deeper than 64 levels" in refused("a: " + "{b: " * 5000 + "1" + "}" * 5000)


def test_aliases_may_not_expand_beyond_200000_values_nor_contain_themselves() -> None:
    levels = ["a0: &a0 [" + ", ".join(["x"] * 10) + "]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    assert "expand to more than 200,000 values" in refused("\n".join(levels))
    assert load_yaml("\n".join(levels[:5]))["a4"][0][0][0][0] == ["x"] * 10  # 10^5 values: fine
    assert "refers to the collection that contains it" in refused("a: &a [1, *a]")


def test_only_regular_files_of_at_most_a_megabyte_are_read(tmp_path: Path) -> None:
    ok = tmp_path / "ok.yaml"
    ok.write_bytes(b"x" * MAX_FILE_BYTES)
    assert len(read_user_file(ok, "config file")) == MAX_FILE_BYTES
    ok.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ConfigError, match="larger than 1,000,000 bytes"):
        read_user_file(ok, "config file")
    with pytest.raises(ConfigError, match="is a folder"):
        read_user_file(tmp_path, "config file")
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_user_file(tmp_path / "pipe", "config file")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_user_file(Path("/dev/zero"), "config file")
    with pytest.raises(FileNotFoundError):
        read_user_file(tmp_path / "missing", "config file")
