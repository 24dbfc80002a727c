"""A long-conversation set in the style of public benchmarks such as LoCoMo, built here (no download):
conversations between two people over dated sessions, each person telling the other about their life in
the first person, with the small talk and stock replies ("Take care!") real chats are full of; the
questions ask about one person in the third person, some in other words than theirs ("Which relative is
coming to live with Nora?" for "My younger nephew is moving in with me next month"), some with a few
of their words ("What pet did Nora adopt?" for "We finally adopted a kitten from the shelter"), so the
speaker, the paraphrase and the exact words all matter. Conversations built from other seeds look
alike (same kinds of facts, other people and values): they are the crowd.

Each turn is a record as ``massgen memory import`` reads it: ``content``, ``speaker``, ``timestamp``,
``dia_id`` (``D<session>:<turn>``). A question's evidence is the ``dia_id`` of the turn that answers it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

# (statements in the first person; questions about {n}, in other words, then with some of the words
# said; values)
FACTS: list[tuple[list[str], list[str], list[str]]] = [
    (
        ["We finally adopted a {v} from the shelter last weekend!", "I brought home a little {v} yesterday."],
        ["What pet did {n} adopt?", "What animal did {n} bring home?"],
        ["kitten", "puppy", "rabbit", "parrot", "hamster", "tortoise"],
    ),
    (
        ["Our dog is called {v}, she chews every shoe in the house.", "{v} is what we named the dog."],
        ["What is the name of {n}'s dog?", "What did {n} name the dog?"],
        ["Luna", "Biscuit", "Pepper", "Daisy", "Maple", "Juniper"],
    ),
    (
        ["I've been practising the {v} every evening for a month now.", "My {v} lessons are going well."],
        [
            "Which instrument is {n} learning to play?",
            "Which instrument has {n} been practising every evening?",
        ],
        ["violin", "cello", "piano", "ukulele", "trumpet", "drums"],
    ),
    (
        ["Just got back from {v}, the food there was unbelievable.", "The trip to {v} was a dream."],
        ["Where did {n} go on vacation?", "Where did {n} go on the trip with the great food?"],
        ["Lisbon", "Kyoto", "Oaxaca", "Reykjavik", "Marrakesh", "Hanoi"],
    ),
    (
        ["I started a new position as a {v} on Monday!", "Big news: they hired me as a {v}."],
        ["What is {n}'s new job?", "What new position was {n} hired for?"],
        ["nurse", "paralegal", "pastry chef", "data analyst", "carpenter", "librarian"],
    ),
    (
        ["I signed up for a {v} league with some friends from work.", "Our {v} team won its first game!"],
        ["Which sport does {n} play in a league?", "What does {n}'s team play?"],
        ["volleyball", "softball", "soccer", "bowling", "basketball", "curling"],
    ),
    (
        ["I can't put down {v}, I read it on the bus every morning.", "I'm halfway through {v} already."],
        ["Which book has {n} been reading lately?", "What is {n} reading on the bus?"],
        ["Dune", "Beloved", "Middlemarch", "The Hobbit", "Circe", "Rebecca"],
    ),
    (
        ["Turns out I'm allergic to {v}, the doctor confirmed it.", "No more {v} for me, I react badly."],
        ["What is {n} allergic to?", "What does the doctor say {n} reacts badly to?"],
        ["peanuts", "shellfish", "pollen", "penicillin", "strawberries", "latex"],
    ),
    (
        ["My younger {v} is moving in with me next month.", "My {v} will be staying with us for a while."],
        ["Which relative is coming to live with {n}?", "Who is moving in with {n} next month?"],
        ["brother", "sister", "cousin", "nephew", "niece", "grandmother"],
    ),
    (
        ["I ran my first {v} on Sunday and didn't stop once!", "Crossed the finish line of the {v}!"],
        ["What race did {n} complete?", "Which race did {n} run on Sunday?"],
        ["5K", "10K", "half marathon", "marathon", "trail race", "triathlon"],
    ),
    (
        ["I've been baking {v} every weekend, getting better each time.", "Made {v} from scratch again."],
        ["What has {n} been baking?", "What does {n} make from scratch every weekend?"],
        ["sourdough", "croissants", "bagels", "baguettes", "focaccia", "cinnamon rolls"],
    ),
    (
        [
            "I help out at the {v} on Saturdays now.",
            "Spent the whole morning at the {v} again, so rewarding.",
        ],
        ["Where does {n} volunteer?", "Where does {n} help out on Saturdays?"],
        ["animal shelter", "food bank", "public library", "community garden", "hospice", "youth center"],
    ),
    (
        ["I finally bought a used {v}, it runs great.", "Picked up my {v} from the dealer today."],
        ["What car did {n} buy?", "What did {n} pick up from the dealer?"],
        ["Subaru", "Honda Civic", "Prius", "Volvo", "Mini Cooper", "Jeep"],
    ),
    (
        ["I'm taking a {v} class at the community center.", "My {v} teacher says I'm a natural."],
        ["What class is {n} taking?", "What is {n} learning at the community center?"],
        ["pottery", "salsa", "photography", "woodworking", "sign language", "watercolor"],
    ),
    (
        ["The {v} in my garden are finally ripe.", "We picked a whole basket of {v} this morning."],
        ["What is growing in {n}'s garden?", "What did {n} pick in the garden?"],
        ["tomatoes", "strawberries", "pumpkins", "peppers", "blueberries", "zucchini"],
    ),
    (
        ["I saw {v} live last night, what a show!", "Got tickets to see {v} in concert, front row."],
        ["Which band did {n} see perform?", "Which band did {n} see live in concert?"],
        ["The Lumineers", "Arcade Fire", "Muse", "Paramore", "Haim", "Vampire Weekend"],
    ),
    (
        ["We're moving to {v} at the end of the summer.", "The new apartment in {v} is ours!"],
        ["Which city is {n} relocating to?", "Where is {n}'s new apartment?"],
        ["Denver", "Boston", "Seattle", "Austin", "Portland", "Chicago"],
    ),
    (
        ["I just enrolled in a {v} degree, classes start in the fall.", "My {v} courses are intense."],
        ["What subject is {n} going to study?", "What degree did {n} enroll in?"],
        ["psychology", "nursing", "architecture", "marine biology", "accounting", "history"],
    ),
    (
        ["Honestly nothing beats a bowl of {v} on a rainy day.", "I could eat {v} every single day."],
        ["What is {n}'s favorite comfort food?", "What could {n} eat every single day?"],
        ["ramen", "pho", "chili", "lentil soup", "mac and cheese", "gumbo"],
    ),
    (
        ["I've been learning {v} with an app, twenty minutes a day.", "Ordered dinner in {v} today!"],
        ["Which language is {n} learning?", "Which language is {n} learning with an app?"],
        ["Spanish", "Japanese", "Italian", "Korean", "Portuguese", "German"],
    ),
]

REPLIES = [
    "No way, really? Tell me more!",
    "That sounds amazing, I'm so happy for you.",
    "Wow, how did that come about?",
    "I've always wanted to do something like that.",
    "That's a big step, congratulations!",
    "Ha, that's so you.",
]
STOCK = [
    "Take care!",
    "Talk to you soon!",
    "Haha, I love that.",
    "How have you been?",
    "Good to hear from you!",
    "Thanks for asking!",
    "Let's catch up again soon.",
    "Same here, it's been a busy week.",
    "Bye! Have a great evening.",
    "Hey! Long time no see.",
]
SMALL_TALK = [
    "Work has been hectic, lots of deadlines this month.",
    "The weather finally turned, I went for a long walk by the river.",
    "I slept terribly last night, the neighbours had a party.",
    "We watched an old movie at home, nothing special.",
    "My phone screen cracked again, I need a sturdier case.",
    "I tried a new coffee place downtown, pretty decent.",
    "The traffic this morning was unbearable.",
    "I've been trying to go to bed earlier, with mixed results.",
    "We had friends over for dinner on Friday.",
    "I spent the whole Sunday cleaning the apartment.",
]
NAMES = [
    "Nora", "Felix", "Priya", "Mateo", "Hana", "Omar", "Greta", "Tobias", "Leila", "Dmitri", "Amara", "Jonas",
    "Ines", "Kwame", "Sofia", "Ravi", "Elena", "Marcus", "Yuki", "Bruno", "Chloe", "Idris", "Astrid", "Diego",
]  # fmt: skip
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip


@dataclass(frozen=True)
class Question:
    text: str
    evidence: str
    """The ``dia_id`` of the turn that answers it."""


@dataclass(frozen=True)
class Dialogue:
    speakers: tuple[str, str]
    turns: list[dict[str, Any]]
    questions: list[Question]


def build_dialogue(
    seed: int, sessions: int = 10, turns_per_session: int = 24, facts_each: int = 10
) -> Dialogue:
    """One conversation of ``sessions`` dated sessions between two people with ``facts_each`` facts each."""
    rng = random.Random(seed)
    speakers = (NAMES[(2 * seed) % len(NAMES)], NAMES[(2 * seed + 1) % len(NAMES)])
    told = [(who, kind) for who in (0, 1) for kind in rng.sample(range(len(FACTS)), facts_each)]
    rng.shuffle(told)
    per_session = -(-len(told) // sessions)
    turns: list[dict[str, Any]] = []
    questions: list[Question] = []
    for session in range(1, sessions + 1):
        date = f"{rng.randint(1, 28)} {MONTHS[(seed + session) % 12]}, {2022 + (seed + session) // 12}"
        facts = told[(session - 1) * per_session : session * per_session]
        lines = _session_lines(rng, facts, turns_per_session)
        for number, (who, text, question) in enumerate(lines, start=1):
            dia_id = f"D{session}:{number}"
            turns.append({"content": text, "speaker": speakers[who], "timestamp": date, "dia_id": dia_id})
            if question:
                questions.append(Question(question.format(n=speakers[who]), dia_id))
    return Dialogue(speakers, turns, questions)


def _session_lines(
    rng: random.Random, facts: list[tuple[int, int]], length: int
) -> list[tuple[int, str, str | None]]:
    """``(speaker index, text, question or None)`` of one session: a greeting, the facts with a reply
    each, small talk between them, a goodbye."""
    lines: list[tuple[int, str, str | None]] = [(0, rng.choice(STOCK[7:]), None)]
    lines.append((1, rng.choice(STOCK), None))
    for who, kind in facts:
        statements, questions, values = FACTS[kind]
        lines.append((who, rng.choice(statements).format(v=rng.choice(values)), rng.choice(questions)))
        lines.append((1 - who, rng.choice(REPLIES), None))
    while len(lines) < length - 2:
        at = rng.randrange(2, len(lines) + 1)
        lines.insert(at, (rng.randrange(2), rng.choice(SMALL_TALK + STOCK), None))
    lines += [(0, rng.choice(STOCK[:3]), None), (1, "Take care!", None)]
    return lines


def import_records(dialogue: Dialogue) -> list[dict[str, Any]]:
    """The turns as ``massgen memory import`` lines (role user; speaker, timestamp, dia_id kept)."""
    return [{"role": "user", **turn} for turn in dialogue.turns]


def load_dialogue(store: Any, dialogue: Dialogue, session: str) -> None:
    """Import ``dialogue`` into ``store`` as session ``session``, the way ``massgen memory import`` does."""
    from massgen_cli.cli.memory_import import import_context, import_message

    pairs = [(import_message(item), import_context(item, session, None)) for item in import_records(dialogue)]
    store.record_many(pairs)


def ranked_evidence(
    store: Any, question: Question, session: str, method: str, k: int, context: int = 0, limit: int = 0
) -> list[tuple[str, set[str]]]:
    """The ``dia_id`` of each of the top ``k`` hits of a search scoped to ``session`` (as each hit's
    own source in that session tells it), with the ``dia_id`` of the turns recorded around it when
    ``context`` asks for them; ``limit`` (at least ``k``) is how many results the search asks for."""
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

    scope = SearchFilter(session_id=session)
    hits = store.search(question.text, limit=max(k, limit), method=method, scope=scope, context=context)
    return [
        (str(hit.source.extra.get("dia_id")), {str(turn.source.extra.get("dia_id")) for turn in hit.context})
        for hit in hits[:k]
    ]
