"""The configs a server serves, each as a model: ``massgen/<name>``, the name being the config file's
(``three_agents.yaml`` → ``massgen/three_agents``; ``@examples/NAME`` → ``massgen/NAME``). ``massgen``
alone names the first, as MassGen's server names its default config."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from massgen_cli.config.loader import LoadedConfig
from massgen_cli.errors import ConfigError, UsageError

DEFAULT_MODEL = "massgen"
PREFIX = "massgen/"


@dataclass(frozen=True)
class ServedModel:
    """One served config: its model id and the config as loaded once at start."""

    id: str
    loaded: LoadedConfig


class ServedModels:
    """The served configs in the order given; the first is also ``massgen``."""

    def __init__(self, served: list[ServedModel]):
        if not served:
            raise UsageError("serve needs at least one config")
        self.served = served

    @classmethod
    def load(cls, sources: list[str]) -> ServedModels:
        """Load each config (the embedded default when none is given) and check what its start needs
        (keys, endpoints, paths, tools), so a config that cannot run is refused before the server
        starts: a ``ConfigError`` with every problem, or a ``UsageError`` for two of the same name."""
        from massgen_cli.config import load_config
        from massgen_cli.start_check import check_start

        served: list[ServedModel] = []
        problems: list[str] = []
        given: list[str | None] = [*sources] or [None]
        for source in given:
            loaded = load_config(source)
            problems += [f"{loaded.path.name}: {line}" for line in check_start(loaded).errors]
            model = ServedModel(PREFIX + loaded.path.stem, loaded)
            if any(other.id == model.id for other in served):
                raise UsageError(
                    f"two configs would be served as {model.id}: give one of them another file name"
                )
            served.append(model)
        if problems:
            raise ConfigError(problems)
        return cls(served)

    def __iter__(self) -> Iterator[ServedModel]:
        return iter(self.served)

    @property
    def ids(self) -> list[str]:
        return [DEFAULT_MODEL, *(model.id for model in self.served)]

    def find(self, name: str) -> ServedModel | None:
        """The config ``name`` names (``massgen``: the first), or None."""
        if name == DEFAULT_MODEL:
            return self.served[0]
        return next((model for model in self.served if model.id == name), None)
