"""Retrieval on real long conversations: LoCoMo's development conversations (``../shared/data/locomo-dev``,
real multi-session chats between two people, with questions and the turns that answer them).

Usage: python benchmarks/real_dialogues.py [--data FILE] [--conversations 0 1 ...] [--methods ...]
                                           [--show-misses N] [--through-cli N]

Each conversation is imported into a fresh store through the code ``massgen memory import`` runs (one
record per turn: ``content``, ``speaker``, ``timestamp`` the session's date, ``dia_id``, and a shared
photo's ``blip_caption``), then every question of categories 1-4 (multi-hop, temporal, open-domain,
single-hop; 5 has no answer in the talk) is asked of its session with the search ``massgen memory
search --session S --json --limit 10`` runs. A hit counts when its ``dia_id`` is an evidence turn:

- any@k: an evidence turn among the first k hits;
- session@k: a hit from a session that holds an evidence turn;
- for ``hybrid+context`` a hit also counts when an evidence turn is among the turns shown around it
  (``--context 1``): each hit's own ``context`` list in the JSON, which is what the command prints
  by default; ``session@k`` still counts the hits' own sessions only.

``hybrid`` is the figure the outside measure takes (a hit counts by its own ``dia_id``);
``hybrid+context`` says how often the answer is at least shown beside a hit. ``--through-cli N``
imports each conversation with the ``massgen`` command itself, asks its first N questions with
``massgen memory search --session S --json --limit 10`` and counts the questions whose printed
hits and context turns differ from the benchmark's own search of that store (0 expected).

It prints these for dense, lexical, hybrid and hybrid+context, overall and per category, and the share
of the top-10 hits said by the person the question names (how much a question about Caroline finds
Caroline's own lines rather than lines that address her). Absent data is said, and the script ends
with exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")

DEFAULT_DATA = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "locomo-dev" / "locomo_dev.json"
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("dense", "lexical", "hybrid", "hybrid+context")
KS = (1, 5, 10)
SESSION_KS = (5, 10)
LIMIT = 10
_SESSION_OF = re.compile(r"^D(\d+):")


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]
    names: tuple[str, ...]

    @property
    def sessions(self) -> frozenset[str]:
        return frozenset(session_of(dia_id) for dia_id in self.evidence)


@dataclass(frozen=True)
class Conversation:
    number: int
    speakers: tuple[str, str]
    records: list[dict[str, Any]]
    questions: list[Question]


def session_of(dia_id: str) -> str:
    found = _SESSION_OF.match(dia_id)
    return found[1] if found else dia_id


def read_conversations(path: Path) -> list[Conversation]:
    """The file's conversations as import records and questions (categories 1-4)."""
    found = []
    for number, item in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        talk = item["conversation"]
        speakers = (talk["speaker_a"], talk["speaker_b"])
        questions = [
            Question(
                str(qa["question"]),
                int(qa["category"]),
                frozenset(_evidence(qa.get("evidence") or [])),
                tuple(name for name in speakers if name.casefold() in str(qa["question"]).casefold()),
            )
            for qa in item["qa"]
            if int(qa["category"]) in CATEGORIES and qa.get("evidence")
        ]
        found.append(Conversation(number, speakers, list(import_records(talk)), questions))
    return found


def _evidence(items: list[str]) -> Iterator[str]:
    """The evidence's dia_ids (a few are written ``D8:6; D9:17`` in one item)."""
    for item in items:
        yield from (part.strip() for part in re.split(r"[;,]", str(item)) if part.strip())


def import_records(talk: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One ``massgen memory import`` line per turn, in order: the session's date as its timestamp, a
    shared photo's caption beside its text."""
    number = 1
    while f"session_{number}" in talk:
        date = talk.get(f"session_{number}_date_time", "")
        for turn in talk[f"session_{number}"]:
            record = {
                "content": turn["text"],
                "speaker": turn["speaker"],
                "timestamp": date,
                "dia_id": turn["dia_id"],
            }
            if turn.get("blip_caption"):
                record["blip_caption"] = turn["blip_caption"]
            yield record
        number += 1


@dataclass
class Tally:
    """Hits counted per method, category and k."""

    asked: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    found: dict[tuple[str, str, int, int], int] = field(default_factory=lambda: defaultdict(int))
    named: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def count(self, method: str, question: Question, hits: list[dict[str, Any]]) -> None:
        for kind, ks in (("any", KS), ("session", SESSION_KS)):
            for k in ks:
                if _counts(kind, question, hits[:k], method.endswith("+context")):
                    self.found[(method, kind, k, question.category)] += 1
        if question.names:
            speakers = [str(hit["metadata"].get("speaker", "")) for hit in hits[:LIMIT]]
            tally = self.named[method]
            tally[0] += sum(speaker in question.names for speaker in speakers)
            tally[1] += len(speakers)

    def share(self, method: str, kind: str, k: int, category: int | None = None) -> float:
        categories = [category] if category else list(CATEGORIES)
        asked = sum(self.asked[c] for c in categories)
        return sum(self.found[(method, kind, k, c)] for c in categories) / max(asked, 1)


def _counts(kind: str, question: Question, hits: list[dict[str, Any]], with_context: bool) -> bool:
    for hit in hits:
        ids = [str(hit["metadata"].get("dia_id", ""))]
        if with_context:
            ids += [str(turn.get("dia_id", "")) for turn in hit.get("context", [])]
        if kind == "any" and question.evidence.intersection(ids):
            return True
        if kind == "session" and question.sessions.intersection(session_of(i) for i in ids[:1]):
            return True
    return False


def imported(conversation: Conversation, folder: Path) -> tuple[Any, Any]:
    """``(store, scope)``: a store in ``folder`` (the embedded default's memory block, as ``memory
    import`` reads it) holding ``conversation`` as ``massgen memory import`` writes it, and the scope of
    its session. Close the store when done."""
    from massgen_cli.cli.memory_import import import_context, import_message
    from massgen_cli.config.memory_loader import load_memory_config
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
    from massgen_cli.memory.longterm.store.importing import Importer
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    settings = load_memory_config(None)
    session = f"locomo_{conversation.number}"
    store = PersistentMemory(
        settings.persistent_memory, folder, domain=settings.domain, task_type=settings.task_type
    )
    pairs = [(import_message(item), import_context(item, session, None)) for item in conversation.records]
    with Importer(store) as importer:
        for _ in importer.write([pairs]):
            pass
    store.record_winner(session, 0, "import")
    return store, SearchFilter(session_id=session)


def measure(conversations: list[Conversation], methods: tuple[str, ...], show_misses: int) -> Tally:
    """Every question of every conversation, each conversation imported into a fresh store."""
    from massgen_cli.memory.longterm.store.vector_stores import close_clients

    tally = Tally()
    for conversation in conversations:
        with tempfile.TemporaryDirectory() as folder:
            store, scope = imported(conversation, Path(folder))
            misses = 0
            for question in conversation.questions:
                tally.asked[question.category] += 1
                for method in methods:
                    base, _, extra = method.partition("+")
                    hits = store.search(
                        question.text, limit=LIMIT, scope=scope, method=base, context=1 if extra else 0
                    )  # type: ignore[arg-type]
                    found = [hit.to_json() for hit in hits]
                    tally.count(method, question, found)
                    if (
                        method == "hybrid"
                        and misses < show_misses
                        and not _counts("any", question, found[:5], False)
                    ):
                        misses += 1
                        _show_miss(question, found, conversation)
            store.close()
            close_clients()
        print(f"conversation {conversation.number}: {len(conversation.questions)} questions", file=sys.stderr)
    return tally


def _show_miss(question: Question, hits: list[dict[str, Any]], conversation: Conversation) -> None:
    texts = {r["dia_id"]: f"{r['speaker']}: {r['content']}" for r in conversation.records}
    print(f"\nMISS [{CATEGORIES[question.category]}] {question.text}", file=sys.stderr)
    for dia_id in sorted(question.evidence):
        print(f"   want {dia_id} {texts.get(dia_id, '?')[:150]}", file=sys.stderr)
    for hit in hits[:5]:
        meta = hit["metadata"]
        print(f"   got  {meta.get('dia_id')} {meta.get('speaker')}: {hit['text'][:120]}", file=sys.stderr)


def print_figures(tally: Tally, methods: tuple[str, ...]) -> None:
    asked = sum(tally.asked.values())
    print(f"\nReal conversations: {asked} questions of categories 1-4, {LIMIT} results each")
    header = "".join(f"  any@{k:<3}" for k in KS) + "".join(f"  sess@{k:<3}" for k in SESSION_KS)
    print(f"{'method':<16}{header}  speaker of top 10")
    for method in methods:
        row = "".join(f"  {tally.share(method, 'any', k):7.3f}" for k in KS)
        row += "".join(f"  {tally.share(method, 'session', k):7.3f}" for k in SESSION_KS)
        named, total = tally.named[method]
        print(f"{method:<16}{row}  {named / max(total, 1):7.3f}")
    print("\nper category (any@1 / any@5 / any@10 / session@10):")
    for category, name in CATEGORIES.items():
        cells = "  ".join(
            f"{method} "
            + "/".join(f"{tally.share(method, 'any', k, category):.3f}" for k in KS)
            + f"/{tally.share(method, 'session', 10, category):.3f}"
            for method in methods
        )
        print(f"  {name:<11} ({tally.asked[category]:3d})  {cells}")


def figures(
    data: Path, numbers: list[int] | None, methods: tuple[str, ...], show_misses: int = 0
) -> Tally | None:
    """The tally over the conversations of ``data`` (all, or those ``numbers`` names); None when the
    file is absent."""
    if not data.is_file():
        print(f"the real conversations are not here ({data}): nothing measured")
        return None
    conversations = read_conversations(data)
    chosen = [c for c in conversations if numbers is None or c.number in numbers]
    return measure(chosen, methods, show_misses)


def run_figures() -> dict[str, float]:
    """The figures ``benchmarks/run.py`` reports (none when the conversations are absent): any@5, any@10
    and session@10 of hybrid, alone and counting the turns shown around each hit, and hybrid over the
    better of its halves at its worst k and category."""
    tally = figures(DEFAULT_DATA.resolve(), None, METHODS)
    if tally is None:
        return {}
    found = {
        "real_any_at_5": tally.share("hybrid", "any", 5),
        "real_any_at_10": tally.share("hybrid", "any", 10),
        "real_session_at_10": tally.share("hybrid", "session", 10),
        "real_any_at_5_with_context": tally.share("hybrid+context", "any", 5),
        "real_any_at_10_with_context": tally.share("hybrid+context", "any", 10),
    }
    ratios = [
        tally.share("hybrid", "any", k, category)
        / max(tally.share("dense", "any", k, category), tally.share("lexical", "any", k, category), 1e-9)
        for k in KS
        for category in CATEGORIES
    ]
    return {**found, "real_hybrid_over_better_half": min(ratios)}


def through_cli(conversations: list[Conversation], count: int) -> tuple[int, int]:
    """``(asked, differing)``: each conversation imported by ``massgen memory import`` and its first
    ``count`` questions asked with ``massgen memory search --json``, against the benchmark's search
    of the same store (hit and context ``dia_id``s, in order)."""
    from massgen_cli.config.memory_loader import load_memory_config
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.store.vector_stores import close_clients

    asked = differing = 0
    for conversation in conversations:
        session = f"locomo_{conversation.number}"
        with tempfile.TemporaryDirectory() as folder:
            lines = Path(folder) / "talk.jsonl"
            lines.write_text("".join(json.dumps(record) + "\n" for record in conversation.records))
            _massgen("memory", "import", str(lines), "--session", session, "--state-dir", folder)
            printed = [
                _massgen("memory", "search", question.text, "--session", session, "--json", "--limit",
                         str(LIMIT), "--state-dir", folder)
                for question in conversation.questions[:count]
            ]  # fmt: skip
            settings = load_memory_config(None)
            store = PersistentMemory(
                settings.persistent_memory, Path(folder), domain=settings.domain, task_type=settings.task_type
            )
            for question, output in zip(conversation.questions, printed, strict=False):
                hits = store.search(
                    question.text, limit=LIMIT, scope=SearchFilter(session_id=session), context=1
                )
                found = [json.loads(line) for line in output.splitlines() if line.strip()]
                asked += 1
                differing += _shown(found) != _shown([hit.to_json() for hit in hits])
            store.close()
            close_clients()
    return asked, differing


def _massgen(*arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "massgen_cli", *arguments], capture_output=True, text=True, check=True
    )
    return done.stdout


def _shown(hits: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    return [
        (str(hit["metadata"].get("dia_id")), [str(turn.get("dia_id")) for turn in hit.get("context", [])])
        for hit in hits
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, nargs="*")
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument(
        "--show-misses", type=int, default=0, help="Print this many hybrid misses per conversation."
    )
    parser.add_argument(
        "--through-cli", type=int, default=0, help="Ask this many questions per conversation via massgen."
    )
    args = parser.parse_args()
    methods = tuple(args.methods)
    if args.through_cli and args.data.resolve().is_file():
        chosen = [
            c
            for c in read_conversations(args.data.resolve())
            if c.number in (args.conversations or [c.number])
        ]
        asked, differing = through_cli(chosen, args.through_cli)
        print(f"through the massgen command: {differing} of {asked} questions printed other hits or context")
    tally = figures(args.data.resolve(), args.conversations, methods, args.show_misses)
    if tally is not None:
        print_figures(tally, methods)


if __name__ == "__main__":
    main()
