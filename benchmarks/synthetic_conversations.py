"""A synthetic long-conversation set: facts planted among chit-chat, asked about many turns later.

Each fact is one sentence inside a longer, chatty message (as in real conversations, where a small
embedder's vector is dominated by the rest of the message); every person has facts of every kind
(the distractors an embedder confuses), and questions are worded differently from the facts (which
lexical matching misses). Deterministic for a given seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

NAMES = [
    "Priya",
    "Tomasz",
    "Aiko",
    "Oluwaseun",
    "Marguerite",
    "Ravi",
    "Ingrid",
    "Mateo",
    "Yusuf",
    "Chiara",
    "Bjorn",
    "Leilani",
    "Dmitri",
    "Esperanza",
    "Kwame",
    "Sunniva",
    "Hiroshi",
    "Nadia",
    "Callum",
    "Fatima",
    "Anselm",
    "Rosalind",
    "Tenzin",
    "Ximena",
    "Gideon",
    "Marisol",
    "Lorcan",
    "Svetlana",
    "Idris",
    "Paloma",
    "Cosmin",
    "Wilhelmina",
    "Zubair",
    "Oriane",
    "Thaddeus",
    "Amaia",
    "Florin",
    "Henrike",
    "Jovan",
    "Keziah",
]

KINDS = [
    (
        "{n}'s dog is called {v}.",
        "What name did {n} give the dog?",
        ["Biscuit", "Pepper", "Mochi", "Rufus", "Juniper"],
    ),
    (
        "{n} moved to {v} last spring.",
        "Which city does {n} live in now?",
        ["Lisbon", "Tallinn", "Osaka", "Quito", "Hobart"],
    ),
    (
        "{n} plays the {v} in a band.",
        "What instrument does {n} perform with?",
        ["cello", "oboe", "banjo", "tuba", "sitar"],
    ),
    (
        "{n} is allergic to {v}.",
        "Which food must {n} avoid?",
        ["peanuts", "shellfish", "sesame", "kiwi", "lentils"],
    ),
    (
        "{n}'s favourite board game is {v}.",
        "Which tabletop game does {n} like best?",
        ["Azul", "Carcassonne", "Catan", "Hanabi", "Wingspan"],
    ),
]

CHATTER = [
    "The weather was lovely this afternoon, we walked along the river.",
    "I still need to answer a few emails before the weekend.",
    "Lunch was a simple salad with bread and olive oil.",
    "The meeting ran late again, nothing new was decided.",
    "I watched a documentary about deep sea creatures yesterday.",
    "My phone battery keeps draining faster than it used to.",
    "We should plan the team outing sometime next month.",
    "The train was crowded but it arrived on time.",
    "I started reading a long novel about a family of sailors.",
    "Coffee at the new place downstairs is surprisingly good.",
    "There is construction noise outside the office all week.",
    "I forgot my umbrella and got soaked on the way home.",
]


@dataclass(frozen=True)
class Probe:
    """A question asked late in the conversation and the message that holds its answer."""

    question: str
    fact: str


@dataclass(frozen=True)
class Conversation:
    messages: list[str]
    probes: list[Probe]


def build_conversation(people: int = 30, chatter_per_fact: int = 10, seed: int = 7) -> Conversation:
    """``people`` persons, each with one fact of every kind, among ``chatter_per_fact`` lines of chatter."""
    rng = random.Random(seed)
    facts: list[str] = []
    probes: list[Probe] = []
    for name in NAMES[:people]:
        kind_index = rng.randrange(len(KINDS))
        for index, (fact_form, question_form, values) in enumerate(KINDS):
            fact = fact_form.format(n=name, v=rng.choice(values))
            message = " ".join([*rng.sample(CHATTER, 2), fact, rng.choice(CHATTER)])
            facts.append(message)
            if index == kind_index:
                probes.append(Probe(question_form.format(n=name), message))
    messages: list[str] = []
    for fact in rng.sample(facts, len(facts)):
        messages += [
            f"{rng.choice(CHATTER)} ({rng.randrange(10_000)})" for _ in range(rng.randrange(chatter_per_fact))
        ]
        messages.append(fact)
    return Conversation(messages, probes)


SPEAKERS = ("Alex", "Sam")
FIRST_DAY = 1


def recall_at(  # type: ignore[no-untyped-def]
    store, conversation: Conversation, k: int, method: str, session: str | None = None
) -> float:
    """Share of probes whose fact is among the top ``k`` results of ``method`` (in ``session``, if set)."""
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

    found = 0
    for probe in conversation.probes:
        hits = store.search(probe.question, limit=k, method=method, scope=SearchFilter(session_id=session))
        found += any(hit.text == probe.fact for hit in hits)
    return found / len(conversation.probes)


def records(conversation: Conversation) -> list[dict]:  # type: ignore[type-arg]
    """The messages as imported turns of a two-person conversation: a speaker and a date each."""
    return [
        {
            "role": "user",
            "content": text,
            "metadata": {
                "speaker": SPEAKERS[turn % 2],
                "timestamp": f"2023-{1 + turn // 280:02d}-{FIRST_DAY + turn // 10 % 28:02d}",
            },
        }
        for turn, text in enumerate(conversation.messages)
    ]


def load_into(store, conversation: Conversation, session: str = "synthetic") -> None:  # type: ignore[no-untyped-def]
    """Record every message as its own turn of one session."""
    from massgen_cli.memory.longterm.record.memories import RecordContext

    messages = records(conversation)
    contexts = [RecordContext("user", session, turn) for turn in range(1, len(messages) + 1)]
    store.record_many(list(zip(messages, contexts, strict=True)))


@dataclass(frozen=True)
class Filler:
    """One chatter memory of ``filler_memories``, as ``index.add`` takes it."""

    memory_id: str
    key: str
    text: str
    source: Any  # a Source
    vector: Any  # a float32 unit vector


def filler_memories(
    count: int, sessions: int = 10, seed: int = 3, agents: tuple[str, ...] = ("user",)
) -> Iterator[Filler]:
    """``count`` chatter memories with random unit vectors, spread over ``sessions`` sessions; in each
    session every turn has one memory of each of ``agents`` (turns numbered from 1)."""
    import numpy as np

    from massgen_cli.memory.longterm.record.memories import Source

    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for row in range(count):
        agent = agents[row // sessions % len(agents)]
        turn = row // (sessions * len(agents)) + 1
        source = Source(agent, f"filler_{row % sessions}", turn, 1)
        text = f"{CHATTER[row % len(CHATTER)]} (filler {row})"
        yield Filler(f"filler-{seed}-{row}", f"filler:{seed}:{row}", text, source, vectors[row])


def filler_winners(
    count: int, sessions: int = 10, agents: tuple[str, ...] = ("user",)
) -> Iterator[tuple[str, int, str, int]]:
    """``(session, turn, agent, attempt)``: who won each turn of ``filler_memories`` (the agents in turn)."""
    turns = -(-count // (sessions * len(agents)))
    for session in range(sessions):
        for turn in range(1, turns + 1):
            yield f"filler_{session}", turn, agents[turn % len(agents)], 1


def fill_index(  # type: ignore[no-untyped-def]
    store, count: int, sessions: int = 10, seed: int = 3, agents: tuple[str, ...] = ("user",)
) -> None:
    """``filler_memories`` written to the index directly (and, for several agents, the winner of every
    turn): searches read only the index, so this measures their cost at any size without embedding
    every row."""
    fields = {"domain": store.domain, "task_type": store.task_type, "role": "user"}
    for filler in filler_memories(count, sessions, seed, agents):
        store.index.add(filler.memory_id, filler.key, filler.text, fields, filler.source, filler.vector)
    if len(agents) > 1:
        for session, turn, agent, attempt in filler_winners(count, sessions, agents):
            store.index.record_winner(session, turn, agent, attempt)
