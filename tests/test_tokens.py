"""Offline token counting: the seeded encodings give OpenAI's reference ids."""

from __future__ import annotations

import subprocess
import sys

from massgen_cli import tokens


def test_reference_ids_offline(tmp_path):
    code = (
        "import tiktoken, massgen_cli.tokens as t; t.seed_offline_encodings();"
        "print(tiktoken.get_encoding('cl100k_base').encode('hello world'),"
        " tiktoken.get_encoding('o200k_base').encode('hello world'))"
    )
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"), "PATH": "", "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out.strip() == "[15339, 1917] [24912, 2375]"


def test_encoding_by_model_family():
    assert tokens.encoding_name_for_model("gpt-4o-mini") == "o200k_base"
    assert tokens.encoding_name_for_model("gpt-4.1") == "o200k_base"
    assert tokens.encoding_name_for_model("o3-mini") == "o200k_base"
    assert tokens.encoding_name_for_model("gpt-4-turbo") == "cl100k_base"
    assert tokens.encoding_name_for_model("gpt-3.5-turbo") == "cl100k_base"


def test_counts():
    assert tokens.count_text_tokens("hello world", "gpt-4") == 2
    messages = [{"role": "user", "content": "hello world"}]
    assert tokens.count_message_tokens(messages, "gpt-4o") == 3 + 3 + 1 + 2


def test_cli_import_stays_light():
    code = (
        "import sys, massgen_cli.cli.main;"
        "heavy = {'mem0', 'qdrant_client', 'openai', 'anthropic', 'tiktoken', 'pydantic', 'onnxruntime'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
