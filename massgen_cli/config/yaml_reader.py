"""Reading a config's YAML into plain values, within bounds, keeping the line of every key.

PyYAML's parser (its C one, libyaml, when present) yields events; this module builds them into dicts,
lists and scalars itself, as ``yaml.safe_load`` would (the same tags, anchors shared, ``<<`` merges), so
that reading a config

* is quick: the C parser's events are cheap, while PyYAML's node graph and constructor cost seconds more
  on a large file;
* is bounded: a document that stands for more than ``MAX_EXPANDED_VALUES`` values or
  ``MAX_EXPANDED_CHARACTERS`` characters once its aliases (``*name``) are expanded is refused while it is
  read (an alias bomb is a few lines that expand to billions, which any later walk over the values would
  go through), nesting stops at ``MAX_DEPTH``, and reading stops past a budget of processor time;
* finds keys repeated in a mapping, which YAML libraries accept silently (the last one wins), and names
  their lines.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from massgen_cli.config.problems import CappedLines, join_path
from massgen_cli.errors import ConfigError

Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""The C loader where PyYAML was built with libyaml (several times faster), else the Python one."""

MAX_EXPANDED_VALUES = 1_000_000
"""Far more values than any real config holds, counted with every alias expanded: beyond it the document
is taken for an alias bomb (or for no config at all) and is not read further."""
MAX_EXPANDED_CHARACTERS = 20_000_000
"""Four times the largest accepted file, counted with every alias expanded: a long string aliased many
times is as costly to every later step as many values."""
MAX_DEPTH = 100
"""Far deeper than any real config nests; a deeper document would exhaust the recursion of later steps."""
READ_DEADLINE_S = 10.0
"""Reading the largest accepted file takes a second or two of processor time; a document that has taken
this much of the reading thread's time (not of the clock's: a busy machine slows every file alike) is
refused rather than waited for."""
_CLOCK_EVERY = 1024
"""How many events are read between two looks at the clock."""

_YAML_TAG = "tag:yaml.org,2002:"
_PLAIN_TAGS = (None, "!")
"""An event without a tag of its own: its tag is resolved from its value, as PyYAML's composer does."""
_STRING_TAGS = (_YAML_TAG + "str", _YAML_TAG + "value")
_MERGE_TAG = _YAML_TAG + "merge"
_MERGE = object()
"""The key of a ``<<`` entry, which merges mappings into the one that holds it."""


@dataclass
class ReadDocument:
    """The document's value, and one problem per key repeated in a mapping (its last value is kept)."""

    value: Any
    duplicates: CappedLines


def read_yaml(text: str, *, deadline_s: float = READ_DEADLINE_S) -> ReadDocument:
    """The value of the one YAML document in ``text`` (None when it is empty).

    Raises ConfigError (``line N: ...``) for a document beyond the bounds, an alias to no anchor or to
    the value that holds it, an anchor set twice, a tag a config has no use for, or a second document;
    ``yaml.MarkedYAMLError`` for text that is not YAML.
    """
    loader = Loader(text)
    try:
        builder = _Builder(loader, deadline_s)
        return ReadDocument(builder.build(), builder.duplicates)
    finally:
        loader.dispose()


@dataclass
class _Frame:
    """A mapping or list being built, its place in its parent (for YAML paths) and its anchor; for a
    mapping also the key waiting for its value, the lines of each key and the ``<<`` values."""

    container: dict[Any, Any] | list[Any]
    place: str | int | None
    anchor: str | None
    size_before: tuple[int, int]
    key: Any = None
    has_key: bool = False
    key_lines: dict[Any, list[int]] = field(default_factory=dict)
    merges: list[tuple[Any, yaml.Event]] = field(default_factory=list)


class _Builder:
    """Builds one document from the loader's events, counting the values it stands for."""

    def __init__(self, loader: yaml.SafeLoader, deadline_s: float):
        self.loader = loader
        self.deadline_s = deadline_s
        self.deadline = time.thread_time() + deadline_s
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}
        self.anchor_lines: dict[str, int] = {}
        self.anchor_sizes: dict[str, tuple[int, int]] = {}
        """The values and characters each finished anchor stands for; one still being built is absent."""
        self.values = self.characters = 0
        self.aliased = False
        self.duplicates = CappedLines("problems")
        self.result: Any = None
        self.documents = 0
        resolvers = loader.yaml_implicit_resolvers
        self.typed_starts = None if None in resolvers or loader.yaml_path_resolvers else set(resolvers)
        """The first characters of the plain scalars that may be other than strings (None: any)."""
        self.handlers: dict[type[yaml.Event], Callable[[Any], None]] = {
            yaml.ScalarEvent: self.scalar,
            yaml.MappingStartEvent: self.start,
            yaml.SequenceStartEvent: self.start,
            yaml.MappingEndEvent: self.end,
            yaml.SequenceEndEvent: self.end,
            yaml.AliasEvent: self.alias,
            yaml.DocumentStartEvent: self.document,
        }

    def build(self) -> Any:
        events = 0
        while self.loader.check_event():
            event = self.loader.get_event()
            events += 1
            if events % _CLOCK_EVERY == 0 and time.thread_time() > self.deadline:
                raise _error(event, f"reading the YAML took over {self.deadline_s:g} s, so it was stopped")
            handler = self.handlers.get(type(event))
            if handler is not None:
                handler(event)
        return self.result

    def document(self, event: yaml.DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            raise _error(event, "a config is one YAML document, but a second one starts here (---)")

    def scalar(self, event: yaml.ScalarEvent) -> None:
        self.count(1, len(event.value), event)
        value = self.scalar_value(event)
        self.add(value, event)
        if event.anchor is not None:
            self.set_anchor(event.anchor, value, event)
            self.anchor_sizes[event.anchor] = (1, len(event.value))

    def scalar_value(self, event: yaml.ScalarEvent) -> Any:
        tag = event.tag
        if tag in _PLAIN_TAGS:
            if self.surely_text(event):
                return event.value
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag in _STRING_TAGS:
            return event.value
        if tag == _MERGE_TAG:
            if self.stack and isinstance(self.stack[-1].container, dict) and not self.stack[-1].has_key:
                return _MERGE
            raise _error(event, "<< merges mappings, as a key only; quote it ('<<') to mean the text")
        construct = yaml.SafeLoader.yaml_constructors.get(tag)
        if construct is None:
            raise _error(event, f"the tag {_short(tag)} has no meaning in a config; write a plain value")
        node = yaml.ScalarNode(tag, event.value, None, None, event.style)
        try:
            return construct(self.loader, node)
        except (ValueError, TypeError, yaml.YAMLError):
            raise _error(event, f"{event.value!r} cannot be read as {_short(tag)}") from None

    def surely_text(self, event: yaml.ScalarEvent) -> bool:
        """Whether a scalar without a tag is a string without asking the resolver (most are: quoted,
        or plain with a first character no other type starts with), which saves a second on a big file."""
        plain, value = event.implicit[0], event.value
        return not plain or (self.typed_starts is not None and value[:1] not in self.typed_starts)

    def start(self, event: yaml.MappingStartEvent | yaml.SequenceStartEvent) -> None:
        self.count(1, 0, event)
        mapping = isinstance(event, yaml.MappingStartEvent)
        if event.tag not in (*_PLAIN_TAGS, _YAML_TAG + ("map" if mapping else "seq")):
            raise _error(
                event,
                f"the tag {_short(event.tag)} has no meaning in a config; write a plain list or mapping",
            )
        if len(self.stack) >= MAX_DEPTH:
            deep = f"the YAML is nested too deeply (over {MAX_DEPTH} levels); a config needs far fewer"
            raise _error(event, deep)
        container: dict[Any, Any] | list[Any] = {} if mapping else []
        place = self.add(container, event)
        if event.anchor is not None:
            self.set_anchor(event.anchor, container, event)
        self.stack.append(_Frame(container, place, event.anchor, (self.values - 1, self.characters)))

    def end(self, event: yaml.CollectionEndEvent) -> None:
        frame = self.stack.pop()
        if frame.anchor is not None:
            values, characters = frame.size_before
            self.anchor_sizes[frame.anchor] = (self.values - values, self.characters - characters)
        if isinstance(frame.container, dict):
            self.report_repeated_keys(frame)
            _merge(frame.container, frame.merges)

    def set_anchor(self, name: str, value: Any, event: yaml.NodeEvent) -> None:
        line = _line(event)
        if name in self.anchor_lines:
            first = self.anchor_lines[name]
            raise _error(event, f"the anchor &{name} is set twice (lines {first} and {line}); rename one")
        self.anchors[name], self.anchor_lines[name] = value, line

    def alias(self, event: yaml.AliasEvent) -> None:
        name = str(event.anchor)
        if name not in self.anchors:
            raise _error(event, f"the alias *{name} names no anchor (&{name}) above it")
        if name not in self.anchor_sizes:
            raise _error(event, f"the alias *{name} is inside the value it names: the config has no end")
        self.aliased = True
        self.count(*self.anchor_sizes[name], event)
        self.add(self.anchors[name], event)

    def count(self, values: int, characters: int, event: yaml.Event) -> None:
        self.values += values
        self.characters += characters
        if self.values <= MAX_EXPANDED_VALUES and self.characters <= MAX_EXPANDED_CHARACTERS:
            return
        if self.values > MAX_EXPANDED_VALUES:
            what = f"over {MAX_EXPANDED_VALUES:,} values"
        else:
            what = f"over {MAX_EXPANDED_CHARACTERS:,} characters of text"
        if self.aliased:
            raise _error(
                event,
                f"the YAML expands to {what} through its aliases (*name), which makes it an alias bomb, "
                "so it was not read further",
            )
        raise _error(event, f"the YAML holds {what}; a config holds far fewer")

    def add(self, value: Any, event: yaml.Event) -> str | int | None:
        """Put ``value`` where it belongs: the document, the next item of a list, or the key or the value
        of a mapping's next entry. Returns its place in its parent, for YAML paths."""
        if not self.stack:
            self.result = value
            return None
        frame = self.stack[-1]
        if isinstance(frame.container, list):
            frame.container.append(value)
            return len(frame.container) - 1
        if not frame.has_key:
            if isinstance(value, (dict, list)):
                raise _error(event, "a mapping key must be a plain value, not a list or mapping")
            frame.key, frame.has_key = value, True
            if value is not _MERGE:
                frame.key_lines.setdefault(value, []).append(_line(event))
            return None
        frame.has_key = False
        if frame.key is _MERGE:
            frame.merges.append((value, event))
            return "<<"
        frame.container[frame.key] = value
        return str(frame.key)

    def report_repeated_keys(self, frame: _Frame) -> None:
        for key, lines in frame.key_lines.items():
            if len(lines) > 1:
                self.duplicates.add(functools.partial(self.repeated_key, frame, key, lines))

    def repeated_key(self, frame: _Frame, key: Any, lines: list[int]) -> str:
        """The problem of ``key`` set more than once in the mapping of ``frame`` (just finished)."""
        path = ""
        for place in [*(f.place for f in self.stack), frame.place, str(key)]:
            if place is not None:
                path = join_path(path, place)
        times = "twice" if len(lines) == 2 else f"{len(lines)} times"
        where = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
        return f"{path}: the key '{key}' appears {times} (lines {where}); keep one"


def _merge(mapping: dict[Any, Any], merges: list[tuple[Any, yaml.Event]]) -> None:
    """Merge the ``<<`` values into ``mapping`` as PyYAML does: its own keys win, then the first of a
    list of merged mappings over the later ones."""
    if not merges:
        return
    merged: dict[Any, Any] = {}
    for value, event in merges:
        for source in reversed(value if isinstance(value, list) else [value]):
            if not isinstance(source, dict):
                raise _error(event, "<< merges mappings: its value must be a mapping or a list of them")
            merged.update(source)
    own = dict(mapping)
    mapping.clear()
    mapping.update(merged)
    mapping.update(own)


def _short(tag: str | None) -> str:
    return f"!!{tag.removeprefix(_YAML_TAG)}" if tag and tag.startswith(_YAML_TAG) else str(tag)


def _line(event: yaml.Event) -> int:
    """The line ``event`` starts on, counted from 1 (0 when the parser gave none)."""
    return event.start_mark.line + 1 if event.start_mark is not None else 0


def _error(event: yaml.Event, message: str) -> ConfigError:
    return ConfigError(f"line {_line(event)}: {message}")
