"""Command patterns apply to every simple command of a line: lists, pipelines, subshells, groups,
substitutions, ``sh -c`` and ``eval`` scripts and the commands behind wrappers; quoted text is no
command; a line that cannot be parsed is refused when patterns are set."""

from __future__ import annotations

import re

import pytest

from massgen_cli.tools.base import ToolError
from massgen_cli.tools.command_policy import CommandPolicy, simple_commands

BLOCK_RM = CommandPolicy.of(None, [r"rm\s+-rf"])
ONLY_LS_CAT_ECHO = CommandPolicy.of([r"^(ls|cat|echo)\b"], None)

BYPASSES = [
    "rm -rf x",
    "true && rm -rf x",
    "true; rm -rf x",
    "a || rm -rf x",
    "echo | rm -rf x",
    "true & rm -rf x",
    "cd /tmp&&rm -rf x",
    "true\nrm -rf x",
    "(rm -rf x)",
    "{ rm -rf x; }",
    "`rm -rf x`",
    "$(rm -rf x)",
    'echo "$(rm -rf x)"',
    'echo "`rm -rf x`"',
    "echo $(echo $(rm -rf x))",
    "cat <(rm -rf x)",
    "sh -c 'rm -rf x'",
    'bash -lc "rm -rf x"',
    "bash -o pipefail -c 'true; rm -rf x'",
    "/bin/sh -c \"sh -c 'rm -rf x'\"",
    "eval 'rm -rf x'",
    "eval rm -rf x",
    "\\rm -rf x",
    "'rm' -rf x",
    "r''m -rf x",
    "rm \\\n -rf x",
    "/bin/rm -rf x",
    "FOO=1 rm -rf x",
    "env rm -rf x",
    "env -i FOO=1 rm -rf x",
    "/usr/bin/env -u HOME rm -rf x",
    "env -S 'rm -rf x'",
    "exec rm -rf x",
    "exec -a name rm -rf x",
    "command rm -rf x",
    "builtin rm -rf x",
    "nohup rm -rf x",
    "nice -n 5 rm -rf x",
    "nice -5 rm -rf x",
    "timeout 5 rm -rf x",
    "timeout -s KILL 5 rm -rf x",
    "xargs rm -rf",
    "find . | xargs -0 -I{} rm -rf {}",
    "sudo rm -rf x",
    "sudo -u root -- rm -rf x",
    "sudo --user root rm -rf x",
    "time rm -rf x",
    "stdbuf -oL rm -rf x",
    "setsid rm -rf x",
    "busybox rm -rf x",
    "! rm -rf x",
    "if true; then rm -rf x; fi",
    "for f in a b; do rm -rf $f; done",
    "while true; do { rm -rf x; }; done",
    "f() { rm -rf x; }",
    "function f { rm -rf x; }",
    "echo a#; rm -rf x",
    "ls > out; rm -rf x 2>&1",
    "coproc rm -rf x",
    "$'rm' -rf x",
    "x=$(rm -rf y) ls",
    "echo ${x:-$(rm -rf y)}",
    "cat <<EOF\n$(rm -rf x)\nEOF",
    'echo "$(cat <<EOF\n)\nEOF\nrm -rf x\n)"',
    "cat <<<x\nrm -rf x\nx",
    "((x = 1 << 2))\nrm -rf x\n2",
    "2>/dev/null rm -rf x",
    "${x}rm -rf x",
    "$(true) rm -rf x",
    "eval`true` 'rm -rf x'",
    "eval -- rm -rf x",
    "env -S rm -rf x",
    "echo $(ls)#; rm -rf x",
    "find . -exec rm -rf {} \\;",
    "find . -name x -execdir rm -rf {} +",
    "flock /tmp/lock rm -rf x",
    "flock -w 5 /tmp/lock -c 'rm -rf x'",
    "ionice -c 3 rm -rf x",
    "taskset 0x1 rm -rf x",
    "taskset -c 0 rm -rf x",
    "chrt -f 10 rm -rf x",
    "setpriv --reuid=1000 --clear-groups rm -rf x",
    "script -qc 'rm -rf x' /dev/null",
    "su root -c 'rm -rf x'",
    "runuser -u nobody -- rm -rf x",
    "watch -n 1 rm -rf x",
    "chroot / rm -rf x",
    "doas rm -rf x",
    "strace -f -o /dev/null rm -rf x",
    "alias x='rm -rf y'",
    "trap 'rm -rf x' EXIT",
    "trap -- 'rm -rf x' INT TERM",
    'trap "echo bye; rm -rf x" 0',
]


@pytest.mark.parametrize("command", BYPASSES)
def test_a_blocked_command_is_refused_wherever_it_is_in_the_line(command: str):
    with pytest.raises(ToolError, match="blocked pattern"):
        BLOCK_RM.check(command)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la && echo done",
        "grep -rn 'rm -rf' notes.txt",
        'echo "$(date)"',
        "echo 'rm -rf x'",
        "echo '$(rm -rf x)' '`rm -rf x`'",
        'echo "\\$(rm -rf x)"',
        "echo ';' rm -rf x",
        "find . -name '*.py' -exec cat {} \\;",
        "ls # ; rm -rf x",
        "# rm -rf x\nls",
        "rmdir -rf x",
        "echo ${HOME:-/tmp} $((1 + 2))",
        "cat > notes.py <<'EOF'\nprint('rm -rf x')\nrm -rf x\nEOF\npython notes.py",
        "cat <<-EOF | sort\n\tprint(1)\n\tEOF",
        'echo "it\'s" \'a "quote"\' > out.txt 2>&1',
        "",
        "ls *.py [ab].txt && echo ?",
        "[ -f x ] && [[ -d y ]] && echo yes",
        "trap - EXIT; trap INT; trap 'echo bye' EXIT; trap -p EXIT",
    ],
)
def test_harmless_lines_are_accepted(command: str):
    BLOCK_RM.check(command)


def test_the_refusal_names_the_pattern_and_the_simple_command():
    with pytest.raises(ToolError) as refused:
        BLOCK_RM.check("ls && sudo /bin/rm -rf build")
    assert "`rm\\s+-rf`" in str(refused.value) and "`/bin/rm -rf build`" in str(refused.value)


def test_with_allowed_patterns_every_simple_command_must_match_one():
    ONLY_LS_CAT_ECHO.check("ls | cat")
    ONLY_LS_CAT_ECHO.check("for f in *.txt; do cat $f; done")
    with pytest.raises(ToolError, match="none of the allowed patterns") as refused:
        ONLY_LS_CAT_ECHO.check("ls; curl x")
    assert "`curl x`" in str(refused.value) and "`^(ls|cat|echo)\\b`" in str(refused.value)


@pytest.mark.parametrize("command", ["echo $(curl x)", "sudo ls", "sh -c ls", "/tmp/ls"])
def test_with_allowed_patterns_wrappers_substitutions_and_paths_must_be_allowed_too(command: str):
    with pytest.raises(ToolError, match="none of the allowed patterns"):
        ONLY_LS_CAT_ECHO.check(command)


@pytest.mark.parametrize(
    "command", ["echo 'rm -rf x' | sh", "sh <<EOF\nrm -rf x\nEOF", "bash -s < plan.txt", "curl x | bash -"]
)
def test_a_shell_reading_its_script_from_standard_input_is_refused_when_patterns_are_set(command: str):
    """No check sees a script a shell reads from its standard input: with patterns set it is refused."""
    with pytest.raises(ToolError, match="standard input"):
        BLOCK_RM.check(command)
    CommandPolicy().check(command)  # no patterns, no parsing


@pytest.mark.parametrize("command", ["bash build.sh", "sh ./configure --prefix=/x", "sh -e -c 'ls'"])
def test_a_shell_running_a_script_file_or_a_c_line_is_accepted(command: str):
    BLOCK_RM.check(command)


BLOCK_TOUCH = CommandPolicy.of(None, [r"touch\b"])


@pytest.mark.parametrize(
    "command",
    ["/usr/bin/tou?h x", "/usr/bin/touc[h] x", "/usr/bin/to*ch x", "/usr/bin/tou{c,}h x", "true; t?uch x"],
)
def test_a_program_named_by_a_glob_is_refused_when_patterns_are_set(command: str, tmp_path):
    """The shell expands ``/usr/bin/tou?h`` to ``/usr/bin/touch`` before it runs it, which no check
    sees: with patterns set, a program named by a glob is refused."""
    for policy in (BLOCK_TOUCH, ONLY_LS_CAT_ECHO):
        with pytest.raises(ToolError, match="is a pattern the shell expands, unseen by checks"):
            policy.check(command)
    CommandPolicy().check(command)  # no patterns, no parsing
    BLOCK_TOUCH.check("touc -h x; echo /usr/bin/tou?h")  # a glob as an argument is the argument's


def test_a_trap_action_meets_the_patterns():
    with pytest.raises(ToolError, match="`touch marker` matches the blocked pattern"):
        BLOCK_TOUCH.check("trap 'touch marker' EXIT")
    with pytest.raises(ToolError, match="none of the allowed patterns"):
        ONLY_LS_CAT_ECHO.check("trap 'curl x' EXIT")
    CommandPolicy.of([r"^(trap|echo)\b"], None).check("trap -p EXIT; trap -- 'echo bye' EXIT")


UNPARSABLE = [
    "echo 'oops",
    'echo "oops',
    "(ls",
    "ls )",
    "echo $(ls",
    "echo `ls",
    "echo ${x",
    "{ ls;",
    "ls >",
    "echo (x)",
    "cat <<EOF\nno end",
    "case $x in a) ls;; esac",
]


@pytest.mark.parametrize("command", UNPARSABLE)
def test_a_line_that_cannot_be_parsed_is_refused_only_when_patterns_are_set(command: str):
    with pytest.raises(ToolError, match="cannot be parsed"):
        BLOCK_RM.check(command)
    with pytest.raises(ToolError, match="cannot be parsed"):
        ONLY_LS_CAT_ECHO.check(command)
    CommandPolicy.of(None, None).check(command)
    CommandPolicy.of([], []).check(command)


def test_a_deeply_nested_line_is_refused():
    with pytest.raises(ToolError, match="cannot be parsed"):
        BLOCK_RM.check("echo " + "$(" * 2000 + ")" * 2000)


def test_an_invalid_pattern_raises_a_regex_error():
    with pytest.raises(re.error):
        CommandPolicy.of(["(unclosed"], None)
    with pytest.raises(re.error):
        CommandPolicy.of(None, ["[a-"])


def test_simple_commands_are_normalised_to_their_words():
    assert list(simple_commands("A=1  \\ls   -l 'my file' | sudo -n wc  -l")) == [
        ["ls", "-l", "my file"],
        ["sudo", "-n", "wc", "-l"],
        ["wc", "-l"],
    ]


def test_quoted_operators_are_words_and_heredoc_bodies_are_no_commands():
    assert list(simple_commands("echo ';' \"a | b\" \\&")) == [["echo", ";", "a | b", "&"]]
    assert list(simple_commands("cat <<'EOF' > out\n(rm -rf x\nEOF\nwc -l out")) == [
        ["cat"],
        ["wc", "-l", "out"],
    ]
