"""Allowed and blocked command patterns, applied to every simple command of a shell line.

A small parser on ``shlex`` finds the simple commands of pipelines and lists, subshells, ``{ …; }``
groups, ``$( … )``, backquotes and ``<( … )`` (in double quotes and heredocs too), scripts given to
``sh -c`` or ``eval``, behind wrappers (``env``, ``sudo``, ``timeout``, ``xargs``, ``flock``, ``chrt``,
``setpriv``, ``script -c``, ``su -c``, ``watch``…), in ``find -exec`` and in ``alias`` definitions; each
is its words joined by single spaces, and a program given by path meets blocked patterns by its base
name too; a ``trap``'s action is a script of its own. The patterns are policy on top of the sandbox, the
security boundary: no parser sees commands a shell builds (``$CMD``, globs in arguments, scripts in
files). With patterns set, an unparsable line is refused, and so is a shell that would read its script
from standard input (``… | sh``, ``sh <<EOF``) and a program named by a glob (``/usr/bin/tou?h``).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, dropwhile

from massgen_cli.tools.base import ToolError

OPERATOR_CHARS = "();<>|&\n"  # quoted, they are protected (private-use characters) while parsing
SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "\n", ";;", ";&", ";;&"})
REDIRECTIONS = frozenset({"<", ">", ">>", "<<", "<<<", "<&", ">&", "&>", "&>>", "<>", ">|"})
OPERATORS = SEPARATORS | REDIRECTIONS | {"(", ")"}
OPERATOR = re.compile("|".join(map(re.escape, sorted(OPERATORS, key=len, reverse=True))))
_PROTECT = str.maketrans({char: chr(0xE000 + ord(char)) for char in OPERATOR_CHARS + "{} \t"})
_UNPROTECT = str.maketrans({ord(code): chr(char) for char, code in _PROTECT.items()})
KEYWORDS = {"!", "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "esac", "coproc"}
QUOTED = {"'": "'", '"': '"\\$`', "<<": "\\$`"}  # the characters still special in quotes, in heredocs
HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(['\"]?)([\w.+-]+)\2(?=[\s;&|<>)]|$)")
QUOTED_SUBSTITUTION = re.compile(  # `…`, or ${…} with one level of nested braces
    r"(?s)`(?P<backquoted>(?:[^`\\]|\\.)*)`"
    r"""|\$\{(?P<parameter>(?:[^{}\\'"]|\\.|'[^']*'|"(?:[^"\\]|\\.)*"|\$\{[^{}]*\})*)\}"""
)
IGNORED = re.compile(r"(?<![^\s;&|()<>])(\d+|\{\w+\})(?=[<>])|\$(?=['\"])")  # "2" of 2>, "$" of $'…'
EXPANSION = re.compile(r"\$(?:\{[^}]*\}|\(…\)|\w+|[^\w\s])")  # $x, ${x}, $(…) (as placeholder), $@
GLOB = re.compile(r"[*?]|\[[^]]*\]|\{[^}]*(,|\.\.)[^}]*\}")
"""Pathname patterns and (in bash) braces: a program named so is what the shell finds (``/usr/bin/tou?h``)."""
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
WRAPPERS = {  # getopt-style: `x:` takes a value, `x::` only an attached one; `name=` a long option's value
    "env": "u:C:S: unset= chdir= split-string=",
    "exec": "a:",
    **dict.fromkeys(("command", "builtin", "nohup", "setsid", "busybox", "taskset", "unshare"), ""),
    "nice": "n: adjustment=",
    "timeout": "s:k: signal= kill-after=",
    "time": "f:o: format= output=",
    "stdbuf": "i:o:e: input= output= error=",
    "xargs": "I:L:n:P:d:s:a:i::l::e:: max-args= max-procs= delimiter= max-chars= arg-file= process-slot-var=",
    "sudo": "u:g:h:p:C:D:r:t:T:U:R: user= group= host= prompt= close-from= chdir= role= type= other-user= "
    "command-timeout= chroot=",
    "doas": "u:C:",
    "flock": "w:E:c: timeout= conflict-exit-code= command=",
    "ionice": "c:n:p:P:u: class= classdata= pid= pgid= uid=",
    "chrt": "T:P:D: sched-runtime= sched-period= sched-deadline=",
    "chroot": " userspec= groups=",
    "setpriv": " reuid= regid= groups= inh-caps= ambient-caps= bounding-set= securebits= pdeathsig= "
    "selinux-label= apparmor-profile= landlock-access= landlock-rule= seccomp-filter=",
    "script": "c:E:I:O:B:T:t:: command= echo= log-in= log-out= log-io= log-timing= timing= logging-format=",
    "su": "c:s:g:G: command= shell= group= supp-group=",
    "runuser": "c:s:g:G:u: command= shell= group= supp-group= user=",
    "strace": "a:b:e:I:o:O:p:P:s:S:u:X:E:",
    "watch": "n:d:: interval= differences::",
}
POSITIONALS = {"timeout": 1, "flock": 1, "taskset": 1, "chrt": 1, "chroot": 1}
"""Wrappers whose command comes after this many operands (a duration, a lock file, a CPU mask, a
priority, a new root)."""
SCRIPT_OPTIONS = {name: ("c", "command") for name in ("flock", "script", "su", "runuser")}
"""Wrappers whose ``-c`` value is a shell command line."""
FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


class UnparsableCommand(ValueError):
    """A line whose commands cannot be told apart (an unclosed quote, parenthesis or heredoc; ``case``)."""


@dataclass(frozen=True)
class CommandPolicy:
    """Which commands may run: all but the blocked ones, or only the allowed ones when given."""

    allowed: tuple[re.Pattern[str], ...] = ()
    blocked: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, allowed: list[str] | None, blocked: list[str] | None) -> CommandPolicy:
        """The policy of these patterns; an invalid one raises ``re.error``."""
        return cls(tuple(map(re.compile, allowed or ())), tuple(map(re.compile, blocked or ())))

    def check(self, command: str) -> None:
        """Raise ``ToolError`` unless every simple command of ``command`` may run."""
        try:  # with no patterns, nothing is parsed
            commands = list(simple_commands(command)) if self.allowed or self.blocked else []
        except (ValueError, RecursionError) as error:  # shlex's errors are ValueErrors too
            raise ToolError(f"command refused: patterns are set and it cannot be parsed ({error})") from None
        for words in commands:
            self._check_simple(words)

    def _check_simple(self, words: list[str]) -> None:
        written, by_base_name = " ".join(words), " ".join([posixpath.basename(words[0]), *words[1:]])
        refused = f"command refused: `{written}` matches"
        for pattern in self.blocked:
            if pattern.match(written) or pattern.match(by_base_name):
                raise ToolError(f"{refused} the blocked pattern `{pattern.pattern}`")
        if self.allowed and not any(pattern.match(written) for pattern in self.allowed):
            patterns = ", ".join(f"`{pattern.pattern}`" for pattern in self.allowed)
            raise ToolError(f"{refused} none of the allowed patterns ({patterns})")


def simple_commands(script: str) -> Iterator[list[str]]:
    """The words of every simple command ``script`` runs, wrappers and the commands they run alike."""
    text, substitutions, _ = _scan(IGNORED.sub("", script))
    yield from chain.from_iterable(map(simple_commands, substitutions))
    yield from chain.from_iterable(map(_layers, _split_commands(_tokens(text))))


def _scan(text: str, start: int = 0, nested: bool = False, quote: str = "") -> tuple[str, list[str], int]:
    """``text`` from ``start`` without comments and heredoc bodies (``quote`` ``<<`` scans one), quoted
    operator characters protected, substitutions as placeholders; their scripts; where ``nested`` ends."""
    out, scripts, heredocs, depth, i = [], [], [], 0, start
    while i < len(text):
        char, pair, end = text[i], text[i : i + 2], i + 1
        if quote and char not in QUOTED[quote]:
            out.append(char.translate(_PROTECT))
        elif char == "\\":
            out += [] if pair == "\\\n" else ["\\" + pair[1:].translate(_PROTECT)]  # no line continuation
            end = i + 2
        elif pair in ("$(", "${") or char == "`" or (not quote and pair in ("<(", ">(")):
            found, word, end = _substitution(text, i)
            scripts += found
            out.append(word.translate(_PROTECT))
        elif char in "'\"":
            quote = "" if quote else char
            out.append(char)
        elif not quote and depth == 0 and (heredoc := HEREDOC.match(text, i)):  # not in (( )), $[ ]
            heredocs.append(heredoc)
            out.append(f"<< {heredoc[3]}")
            end = heredoc.end()
        elif char == "\n" and heredocs:
            out.append(char)
            end, heredocs = _after_heredocs(text, i + 1, heredocs, scripts), []
        elif char == "#" and (not out or out[-1][-1] in " \t\r" + OPERATOR_CHARS):  # a word's start
            newline = text.find("\n", i)  # a comment runs to the line's end
            end = newline if newline >= 0 else len(text)
        elif nested and char == ")" and depth == 0:
            return "".join(out), scripts, i
        else:
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
            out.append(char)
        i = end
    if quote.strip("<") or nested:
        raise UnparsableCommand("a quote is not closed" if quote else "a '$(' or '<(' is not closed")
    return "".join(out), scripts, i


def _after_heredocs(text: str, start: int, heredocs: list[re.Match[str]], scripts: list[str]) -> int:
    """Where the bodies of ``heredocs`` from ``start`` end; unquoted ones' substitutions go to ``scripts``."""
    for doc in heredocs:
        found = re.compile("^" + "\t*" * len(doc[1]) + re.escape(doc[3]) + "$", re.M).search(text, start)
        if found is None:
            raise UnparsableCommand(f"the heredoc {doc[3]!r} is not closed")
        scripts += [] if doc[2] else _scan(text[start : found.start()], quote="<<")[1]
        start = found.end() + 1
    return start


def _substitution(text: str, start: int) -> tuple[list[str], str, int]:
    """The scripts of the substitution at ``start``, the word standing for it, and where it ends."""
    if text[start + 1 : start + 2] != "(":
        found = QUOTED_SUBSTITUTION.match(text, start)
        if found is None:
            raise UnparsableCommand("a backquote or '${' is not closed (or its braces nest too deeply)")
        if found["backquoted"] is not None:
            return [re.sub(r"\\([\\`$\"])", r"\1", found["backquoted"])], "$(…)", found.end()
        return _scan(found["parameter"], quote="<<")[1], found[0], found.end()  # ${…}: a word
    end = _scan(text, start + 2, nested=True)[2]
    return [text[start + 2 : end]], text[start : start + 2] + "…)", end + 1


def _tokens(text: str) -> list[str]:
    """The words (quoted operator characters still protected) and the operators of ``text``."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=OPERATOR_CHARS)
    lexer.whitespace, lexer.whitespace_split, lexer.commenters = " \t\r", True, ""
    return [piece for token in lexer for piece in OPERATOR.findall(token) or [token]]


def _split_commands(tokens: list[str]) -> Iterator[list[str]]:
    """The words of each simple command of ``tokens``, without redirections."""
    words: list[str] = []
    groups, remaining = [], iter(tokens)
    for token in remaining:
        at_start = token in ("(", "{") and (all(word in KEYWORDS for word in words) or words[0] == "function")
        if token in REDIRECTIONS:  # its target, the next token, is no word of the command
            if next(remaining, None) in (None, *OPERATORS):
                raise UnparsableCommand(f"'{token}' is not followed by a word")
        elif token == "(" and not at_start:  # after words, only `name ()` may come
            if next(remaining, None) != ")":
                raise UnparsableCommand("a '(' follows a word")
            words = []
        elif at_start:
            words = []
            groups.append(token)
        elif token in SEPARATORS or token == ")" or (token == "}" and not words):
            yield words
            words = []
            if token in (")", "}") and (not groups or groups.pop() != {")": "(", "}": "{"}[token]):
                raise UnparsableCommand(f"a '{token}' closes nothing")
        else:
            words.append(token.translate(_UNPROTECT))
    yield words
    if groups:
        raise UnparsableCommand(f"a '{groups[-1]}' is not closed")


def _layers(words: list[str]) -> Iterator[list[str]]:
    """The command, without leading keywords and assignments, and those it runs (wrappers, ``sh -c``)."""
    words = list(dropwhile(lambda word: word in KEYWORDS or ASSIGNMENT.match(word) is not None, words))
    if not words or words[0] in ("for", "select", "function"):  # these only name a variable, a function
        return
    if words[0] == "case":
        raise UnparsableCommand("`case` is not supported")
    yield words
    unexpanded = EXPANSION.sub("", words[0])  # unquoted expansions may be empty: `$x rm`, `${x}rm`
    if unexpanded != words[0]:
        yield from _layers([unexpanded, *words[1:]] if unexpanded else words[1:])
    if GLOB.search(words[0]):
        raise UnparsableCommand(f"the program `{words[0]}` is a pattern the shell expands, unseen by checks")
    name = posixpath.basename(words[0])
    script = _script(name, words[1:])
    if script is not None:
        yield from simple_commands(script)
    elif name in WRAPPERS:
        yield from _layers(_wrapped(words[1:], name))
    elif name == "find":
        for command in _find_commands(words[1:]):
            yield from _layers(command)
    elif name == "alias":  # what a name stands for runs when the name does
        for definition in words[1:]:
            yield from simple_commands(definition.partition("=")[2])
    if name in SHELLS and script is None and _reads_standard_input(words[1:]):
        raise UnparsableCommand(f"`{name}` would read its script from standard input, which no check sees")


def _script(name: str, args: list[str]) -> str | None:
    """The command line ``name`` given ``args`` runs as a script: ``eval``'s words, a ``trap``'s action
    (run on its signal or at exit), a shell's ``-c``; None for anything else."""
    if name == "eval":
        return " ".join(args).removeprefix("-- ")
    if name == "trap":
        args = args[args[:1] == ["--"] :]
        listing = bool(args) and args[0].startswith("-")  # `-` resets, `-p` and `-l` list
        return args[0] if len(args) > 1 and not listing else None  # one word alone names a signal
    return _shell_script(args, name)


def _find_commands(args: list[str]) -> Iterator[list[str]]:
    """The commands ``find``'s ``-exec``/``-ok`` actions run, up to their ``;`` or ``+``."""
    for i, word in enumerate(args):
        if word in FIND_ACTIONS:
            command = args[i + 1 :]
            end = next((k for k, w in enumerate(command) if w in (";", "+")), len(command))
            if command[:end]:
                yield command[:end]


def _reads_standard_input(args: list[str]) -> bool:
    """Whether a shell given ``args`` (and no ``-c``) reads its script from standard input: no operand
    after its options, or ``-s``."""
    operands = [word for word in args if not word.startswith(("-", "+"))]
    return not operands or any("s" in _short_flags(word) for word in args)


def _short_flags(word: str) -> str:
    """The letters of a cluster of short options (``-qc`` gives ``qc``), or "" for anything else."""
    return word[1:] if word.startswith("-") and not word.startswith("--") else ""


def _shell_script(args: list[str], program: str) -> str | None:
    """The script of ``sh -c SCRIPT``, given the shell's arguments; None for no shell or no ``-c``."""
    i, dash_c = 0, False
    while program in SHELLS and i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        dash_c |= not args[i].startswith("--") and "c" in args[i]
        i += 2 if args[i] in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
    i += args[i : i + 1] in (["-"], ["--"])  # the end of the options
    return args[i] if dash_c and i < len(args) else None


def _wrapped(args: list[str], program: str) -> list[str]:
    """The command the wrapper ``program`` given ``args`` runs: its options (and ``timeout``'s duration)
    left out; ``env -S``'s value is a command line."""
    if program in SCRIPT_OPTIONS and (script := _script_option(args)) is not None:
        return ["sh", "-c", script]
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
        name, value, takes_next = _option(args[i], "".join(args[i + 1 : i + 2]), WRAPPERS[program])
        i += 2 if takes_next else 1
        if program == "env" and name in ("S", "split-string"):  # its words come before the others
            return _wrapped(shlex.split(value) + args[i:], program)
    i += args[i : i + 1] == ["--"]  # the end of the options
    rest = args[i + POSITIONALS.get(program, 0) :]
    return ["sh", "-c", " ".join(rest)] if program == "watch" and rest else rest


def _script_option(args: list[str]) -> str | None:
    """The command line given with ``-c`` / ``--command`` anywhere among ``args`` (``su USER -c …``,
    ``flock FILE -c …``), or None."""
    for i, word in enumerate(args):
        if word == "--command":
            return " ".join(args[i + 1 : i + 2])
        if word.startswith("--command="):
            return word.partition("=")[2]
        flags = _short_flags(word)
        if "c" in flags:  # -c VALUE, -qc VALUE, -cVALUE
            attached = flags[flags.index("c") + 1 :]
            return attached or " ".join(args[i + 1 : i + 2])
    return None


def _option(word: str, following: str, spec: str) -> tuple[str, str, bool]:
    """The name and value of a wrapper's option ``word``, and whether its value is the ``following`` word."""
    shorts, *longs = spec.split(" ")
    if word.startswith("--"):
        name, equals, value = word[2:].partition("=")
        takes_next = not equals and name + "=" in longs
        return name, following if takes_next else value, takes_next
    for k, char in enumerate(word[1:], start=2):
        if char + ":" in shorts:
            takes_next = char + "::" not in shorts and not word[k:]
            return char, following if takes_next else word[k:], takes_next
    return "", "", False
