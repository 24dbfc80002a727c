"""Where a config comes from: a file path or ``@examples/NAME`` (a config shipped with the package)."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.config.problems import suggest
from massgen_cli.errors import ConfigError

EXAMPLES_PREFIX = "@examples/"
EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_CONFIG = EXAMPLES_PREFIX + "default"


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
    raise ConfigError(
        f"no shipped config named '{name}'{suggest(relative, stems)}; `massgen --list-examples` lists them"
    )
