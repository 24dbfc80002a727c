"""Where a config comes from: a file path or ``@examples/NAME`` (a config shipped with the package)."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.config.problems import suggest
from massgen_cli.errors import ConfigError

EXAMPLES_PREFIX = "@examples/"
EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_CONFIG = EXAMPLES_PREFIX + "default"
MASSGEN_EXAMPLES = {"basic/multi/three_agents_default": "default"}
"""MassGen 0.1.97's example configs that a shipped config of ours stands for, by MassGen's name: its
three-agent default is our three-agent default (on the embedded model rather than three providers')."""
MASSGEN_CATEGORIES = frozenset(
    {"ag2", "analysis", "basic", "broadcast", "checkpoint", "coordination", "debug", "docs", "examples"}
    | {"features", "memory", "meta", "providers", "rate_limits", "skills", "teams", "tools", "voting"}
)
"""The folders of MassGen 0.1.97's example configs: the first part of its ``@examples/`` names."""


def shipped_configs() -> list[Path]:
    """Every YAML config shipped with the package, sorted."""
    return sorted(p for p in EXAMPLES_DIR.rglob("*.yaml") if p.is_file())


def resolve_config_path(source: str | Path) -> Path:
    """The file a ``--config`` value names; ``@examples/NAME`` matches a shipped config's stem or path."""
    text = str(source)
    if not text.startswith(EXAMPLES_PREFIX):
        path = Path(text).expanduser()
        if path.is_dir():
            raise ConfigError(f"'{text}' is a folder; --config takes a YAML file")
        if not path.is_file():
            raise ConfigError(f"config file '{text}' not found")
        return path
    return _resolve_example(text.removeprefix(EXAMPLES_PREFIX))


def _resolve_example(name: str) -> Path:
    relative = name.removesuffix(".yaml").removesuffix(".yml")
    by_path = EXAMPLES_DIR / f"{relative}.yaml"
    if "/" in relative and by_path.is_file():
        return by_path
    matches = [p for p in shipped_configs() if p.stem == relative]
    if len(matches) == 1:
        return matches[0]
    names = [str(p.relative_to(EXAMPLES_DIR).with_suffix("")) for p in shipped_configs()]
    if len(matches) > 1:
        options = ", ".join(f"@examples/{p.relative_to(EXAMPLES_DIR).with_suffix('')}" for p in matches)
        raise ConfigError(f"@examples/{name} is ambiguous; use one of: {options}")
    stems = [p.stem for p in shipped_configs()] + names
    ours = massgen_counterpart(relative)
    if ours is not None:
        return _resolve_example(ours)
    # A scripted (fake) config is no answer to a name that asks for a real model (single_gpt5nano).
    close = suggest(relative, [stem for stem in stems if "scripted" not in stem or "scripted" in relative])
    if not close and relative.split("/")[0] in MASSGEN_CATEGORIES:
        raise ConfigError(
            f"@examples/{name} is one of MassGen's example configs, which massgen-cli does not ship: "
            "`massgen --list-examples` lists the shipped ones (a MassGen config file loads here: give its "
            "path to --config)"
        )
    raise ConfigError(f"no shipped config named '{name}'{close}; `massgen --list-examples` lists them")


def massgen_counterpart(name: str) -> str | None:
    """Our shipped config that stands for MassGen's example ``name`` (its path, or its file's stem)."""
    relative = name.removeprefix(EXAMPLES_PREFIX).removesuffix(".yaml").removesuffix(".yml")
    for massgen_name, ours in MASSGEN_EXAMPLES.items():
        if relative in (massgen_name, massgen_name.rsplit("/", 1)[-1]):
            return ours
    return None
