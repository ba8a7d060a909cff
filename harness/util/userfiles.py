"""Reading the files a user points PDBench at (configs, agent refs, price tables, personas, templates).

A path in a config can name anything: ``/dev/zero``, a named pipe, a folder, a 20 GB log. Reading it
the ordinary way would hang or exhaust memory, so :func:`read_user_file` reads regular files only,
and at most :data:`MAX_FILE_BYTES` of them. :func:`load_yaml` parses YAML with three rules the
ordinary loader lacks, each of which once let a bad file through silently or crash the process:
a key given twice in one mapping is refused (the ordinary loader keeps the last one without a
word), nesting is at most :data:`MAX_YAML_DEPTH` levels (deeper input overflowed the stack), and
aliases may not expand to more than :data:`MAX_YAML_NODES` nodes (the "billion laughs" of a few
lines that expand to millions).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, SequenceNode

from harness.errors import ConfigError

MAX_FILE_BYTES = 1_000_000  # a config with hundreds of conditions is tens of kB
MAX_YAML_DEPTH = 64  # a PDBench config nests about 6 levels deep
MAX_YAML_NODES = 200_000  # after expanding aliases


def read_user_file(path: Path, what: str, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a regular file of at most ``max_bytes`` bytes, as UTF-8.

    Raises :class:`ConfigError` for anything else (a device, a pipe, a folder, a file too large);
    ``OSError`` (not found, no permission, name too long) and ``UnicodeDecodeError`` are left to the
    caller, which knows what the file was for and what the user can do about it.
    """
    if "\0" in str(path):  # no file can have such a name; os.open would raise ValueError
        raise ConfigError(f"{what} {str(path)!r} contains a NUL character, which no file name can hold: check the path")
    # O_NONBLOCK: opening a named pipe must not wait for a writer; it changes nothing for a regular file.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
            raise ConfigError(f"{what} {path} is {kind}: give the path of a text file")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise ConfigError(
            f"{what} {path} is larger than {max_bytes:,} bytes, more than any {what} needs: check that the path "
            "names the file you meant"
        )
    return b"".join(chunks).decode("utf-8")


class _StrictLoader(yaml.SafeLoader):
    """The safe loader, refusing duplicate keys, deep nesting and alias bombs (see the module docstring)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(node) -> its node count with aliases expanded

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        # check_event() has read the next event into current_event, which is where its mark comes from.
        if self.check_event(AliasEvent):
            mark = self.current_event.start_mark
            node = super().compose_node(parent, index)
            if node is not None and id(node) not in self._sizes:
                raise ComposerError(None, None, "an alias refers to the collection that contains it", mark)
            return node
        if self._depth >= MAX_YAML_DEPTH:
            raise ComposerError(
                None,
                None,
                f"nested deeper than {MAX_YAML_DEPTH} levels (a config needs about 6)",
                self.current_event.start_mark,
            )
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        size = 1
        if isinstance(node, SequenceNode):
            size += sum(self._sizes.get(id(child), 1) for child in node.value)
        elif isinstance(node, MappingNode):
            size += sum(self._sizes.get(id(k), 1) + self._sizes.get(id(v), 1) for k, v in node.value)
        if size > MAX_YAML_NODES:
            raise ComposerError(
                None, None, f"its aliases expand to more than {MAX_YAML_NODES:,} values", node.start_mark
            )
        self._sizes[id(node)] = size
        return node

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, MappingNode):
            first: dict[Any, int] = {}  # key -> line of its first occurrence
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # ``<<: *defaults`` then a key of its own is overriding, not repeating
                key = self.construct_object(key_node, deep=True)
                try:
                    seen = key in first
                except TypeError:
                    continue  # an unhashable key: the ordinary constructor says so
                if seen:
                    raise ConstructorError(
                        None,
                        None,
                        f"the key {key!r} is given twice in one mapping (first at line {first[key] + 1}); "
                        "a key may appear once: remove one of them",
                        key_node.start_mark,
                    )
                first[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse one YAML document strictly; raises ``yaml.YAMLError`` (see :func:`yaml_message`)."""
    loader = _StrictLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_message(exc: BaseException) -> str:
    """A YAML error as one line: the problem and where it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(problem)
