"""A synthetic long-conversation set: facts planted among chit-chat, asked about many turns later.

Each fact is one sentence inside a longer, chatty message (as in real conversations, where a small
embedder's vector is dominated by the rest of the message); every person has facts of every kind
(the distractors an embedder confuses), and questions are worded differently from the facts (which
lexical matching misses). Deterministic for a given seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

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


def recall_at(store, conversation: Conversation, k: int, method: str) -> float:  # type: ignore[no-untyped-def]
    """Share of probes whose fact is among the top ``k`` results of ``method``."""
    found = 0
    for probe in conversation.probes:
        hits = store.search(probe.question, limit=k, method=method)
        found += any(hit.text == probe.fact for hit in hits)
    return found / len(conversation.probes)


def load_into(store, conversation: Conversation, session: str = "synthetic") -> None:  # type: ignore[no-untyped-def]
    """Record every message as its own turn of one session."""
    from massgen_cli.memory.longterm.records import RecordContext

    contexts = [RecordContext("user", session, turn) for turn in range(1, len(conversation.messages) + 1)]
    store.prepare_embeddings(list(zip(conversation.messages, contexts, strict=True)))
    for text, context in zip(conversation.messages, contexts, strict=True):
        store.record([{"role": "user", "content": text}], context)
