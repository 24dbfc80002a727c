"""MassGen's quick start: agents from the command line (``--model``, ``--backend``, ``--system-message``,
``--base-url``) with no config file. The flags build the document a YAML file would hold, and it is
loaded and validated exactly as one (``config.load_built``); ``--list-backends`` prints what ``--backend``
takes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen_cli.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from massgen_cli.config.loader import LoadedConfig

DEFAULT_SYSTEM_MESSAGE = "You are a helpful AI assistant."
"""MassGen's system message for a quick-start agent."""
ORIGIN = "(command line)"
"""The name a quick-start config goes by where a config file's name would stand (the session record)."""
MODEL_FREE_PROTOCOLS = ("local", "scripted")
"""Backends that run without a model name (the embedded model)."""


@dataclass(frozen=True)
class QuickStart:
    """What the quick-start flags asked for; empty when none was given."""

    backend: str | None = None
    models: tuple[str, ...] = ()
    system_message: str | None = None
    base_url: str | None = None

    @property
    def given(self) -> bool:
        return bool(self.backend or self.models or self.system_message is not None or self.base_url)

    def flags(self) -> list[str]:
        """The quick-start flags on the command line, as written."""
        named = [("--backend", self.backend), ("--model", self.models or None), ("--base-url", self.base_url)]
        named.append(("--system-message", self.system_message))
        return [flag for flag, value in named if value is not None]


def load_quick_start(quick: QuickStart) -> LoadedConfig:
    """The config the flags describe: one agent per ``--model`` (``agent1``, ``agent2``…), each on
    ``--backend`` or the backend its model's name implies, validated by the config loader like a file."""
    from massgen_cli.config import load_built

    if not quick.models and not quick.backend:
        raise UsageError(f"{' and '.join(quick.flags())} need --model NAME (or --backend TYPE)")
    document = build_document(quick)
    try:
        loaded = load_built(document, Path.cwd() / ORIGIN)
    except ConfigError as error:
        raise ConfigError([_as_flags(line, quick) for line in error.problems], error.warnings) from None
    loaded.built = document
    for agent in loaded.config.agents:
        if agent.backend.model is None and agent.backend.protocol not in MODEL_FREE_PROTOCOLS:
            raise UsageError(f"--backend {quick.backend} needs --model NAME (the model to call)")
    return loaded


def build_document(quick: QuickStart) -> dict[str, Any]:
    """The YAML document the flags stand for: ``agent:`` for one model, ``agents:`` for several."""
    agents = [_agent(f"agent{number}", model, quick) for number, model in enumerate(quick.models, 1)]
    if not agents:  # --backend alone: its default model (the embedded model, an agent program's)
        agents = [_agent("agent1", None, quick)]
    return {"agent": agents[0]} if len(agents) == 1 else {"agents": agents}


def _agent(agent_id: str, model: str | None, quick: QuickStart) -> dict[str, Any]:
    backend: dict[str, Any] = {"type": quick.backend or _backend_of(model or "")}
    if model is not None:
        backend["model"] = model
    if quick.base_url:
        backend["base_url"] = quick.base_url
    message = quick.system_message if quick.system_message is not None else DEFAULT_SYSTEM_MESSAGE
    return {"id": agent_id, "backend": backend, "system_message": message}


def _backend_of(model: str) -> str:
    """The backend type a model's name implies, as MassGen infers it (``gpt-…`` → openai, ``claude-…`` →
    claude…); a name that implies none needs ``--backend``."""
    from massgen_cli.config.providers import infer_backend_type

    inferred = infer_backend_type(model)
    if inferred is None:
        raise UsageError(
            f"cannot tell the backend from the model name '{model}': add --backend TYPE "
            "(`massgen --list-backends` lists them; chatcompletion with --base-url for any "
            "OpenAI-compatible server)"
        )
    return inferred


def _as_flags(problem: str, quick: QuickStart) -> str:
    """A loader's problem line with the YAML path it starts with said as the flag that set it."""
    for path, flag in sorted(_flag_names(quick).items(), key=lambda item: -len(item[0])):
        if problem.startswith(f"{path}:"):
            return flag + problem[len(path) :]
    return problem


def _flag_names(quick: QuickStart) -> dict[str, str]:
    """The YAML paths of the built document, as the flags that set them."""
    paths = {"backend.type": "--backend", "backend.model": "--model", "backend.base_url": "--base-url"}
    paths["system_message"] = "--system-message"
    count = max(len(quick.models), 1)
    agents = ["agent"] if count == 1 else [f"agents[{index}]" for index in range(count)]
    named = {}
    for index, agent in enumerate(agents):
        model = f" ({quick.models[index]})" if count > 1 else ""
        named.update({f"{agent}.{path}": f"{flag}{model}" for path, flag in paths.items()})
        named[f"{agent}.backend"] = f"--backend{model}"
    return named


def load_run_config(config: str | None, quick: QuickStart) -> LoadedConfig:
    """The run's config: from the quick-start flags, else ``--config`` (else the embedded default)."""
    from massgen_cli.config import load_config

    refuse_with_config(quick, config)
    return load_quick_start(quick) if quick.given else load_config(config)


def refuse_with_config(quick: QuickStart, config: str | None) -> None:
    """The quick-start flags build the config: with ``--config`` they would be ignored (MassGen takes
    ``--config`` and ``--backend`` as exclusive and drops ``--model``), so the pair is a usage error."""
    if config is not None and quick.given:
        flags = quick.flags()
        builds = (
            "builds a config from the command line and does"
            if len(flags) == 1
            else "build a config from the command line and do"
        )
        raise UsageError(
            f"{', '.join(flags)} {builds} not combine with --config; "
            "set the model in the config file, or leave --config out"
        )


def print_backends() -> None:
    """What ``--backend`` (and ``backend.type``) takes: each type, the variable its key is read from,
    and its server; MassGen's agent programs and the API backend each runs as."""
    from massgen_cli.config.massgen_keys import PROGRAM_BACKENDS
    from massgen_cli.config.providers import PROVIDERS

    rows = [("TYPE", "KEY VARIABLE", "SERVER")]
    for name, provider in sorted(PROVIDERS.items()):
        key = provider.api_key_env or "-"
        key = key if provider.needs_key else (f"{key} (optional)" if provider.api_key_env else "none")
        rows.append((name, key, _server(name, provider.protocol, provider.base_url)))
    for program, runs_as in sorted(PROGRAM_BACKENDS.items()):
        rows.append((program, PROVIDERS[runs_as].api_key_env or "none", f"runs as {runs_as} (agent program)"))
    width = [max(len(row[column]) for row in rows) for column in range(2)]
    for name, key, server in rows:
        print(f"{name:<{width[0]}}  {key:<{width[1]}}  {server}")


def _server(name: str, protocol: str, base_url: str | None) -> str:
    if protocol == "local":
        return "embedded model, no network"
    if protocol == "scripted":
        return "replies from the config (tests and demos; not a quick-start backend)"
    if base_url is not None:
        return base_url
    unset = {"chatcompletion": "--base-url required", "azure_openai": "AZURE_OPENAI_ENDPOINT or --base-url"}
    return unset.get(name, "the provider's own")
