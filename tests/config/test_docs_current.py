"""docs/config.md is rendered from the config models and must be regenerated with them."""

from tests.script_module import load_script


def _generator():
    return load_script("scripts/gen_config_docs.py")


def test_config_reference_is_current():
    assert _generator().is_current(), "docs/config.md is out of date; run `python scripts/gen_config_docs.py`"


def test_config_reference_names_every_section_and_alias():
    text = _generator().render()
    for heading in ("### `agents[].backend`", "### `memory`, `agents[].memory`", "### `memory.compression`"):
        assert heading in text
    assert "| `request_timeout_seconds` |" in text and "| `timeout` |" in text
    assert "`mcp_servers`" in text and "| `num_agents` | refused |" in text
