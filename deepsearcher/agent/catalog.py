"""The registered agents: their names for every front-end, and building them from query_settings.

Agents are providers of the feature "agent" (`@register_provider("agent", "deep")` on the
class), so the CLI's `--agent` choices, the request models, the MCP tool schema, the
evaluation runner and the web page all read the same list and a new agent is one file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from deepsearcher.agent.options import AgentOptions, QueryLimits, unknown_option, validate_options
from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.embedding.base import BaseEmbedding
from deepsearcher.llm.base import BaseLLM
from deepsearcher.types.errors import BadInputError, ConfigurationError, DeepSearcherError
from deepsearcher.vector_db.base import BaseVectorDB

registry = ProviderRegistry("agent", ("deepsearcher.agent",))


@dataclass(frozen=True)
class AgentInfo:
    """One registered agent as the front-ends show it."""

    name: str
    cls: Any  # the agent class (its from_settings constructor is not part of `type`)
    label: str
    description: str
    iterative: bool
    routes_agents: bool
    route_rank: int | None
    #: option name → its JSON schema (type, default, bounds, description), from the agent's `Options`
    options: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "iterative": self.iterative,
            "options": self.options,
        }


def _option_schemas(schema: type[AgentOptions]) -> dict[str, dict[str, Any]]:
    properties = schema.model_json_schema().get("properties", {})
    return {name: {key: value for key, value in prop.items() if key != "title"} for name, prop in properties.items()}


def _order(info: AgentInfo) -> tuple[int, int, str]:
    """Routers first, then the agents routers pick from in their order, then the rest by name."""
    if info.routes_agents:
        return (0, 0, info.name)
    if info.route_rank is not None:
        return (1, info.route_rank, info.name)
    return (2, 0, info.name)


def agent_infos() -> list[AgentInfo]:
    infos = []
    for provider in registry.infos():
        cls = registry.get(provider.name)
        infos.append(
            AgentInfo(
                name=provider.name,
                cls=cls,
                label=getattr(cls, "label", "") or provider.name,
                description=getattr(cls, "__description__", "") or (cls.__doc__ or "").strip().split("\n")[0],
                iterative=bool(getattr(cls, "iterative", False)),
                routes_agents=bool(getattr(cls, "routes_agents", False)),
                route_rank=getattr(cls, "route_rank", None),
                options=_option_schemas(getattr(cls, "Options", AgentOptions)),
            )
        )
    infos.sort(key=_order)
    routed: dict[str, dict[str, Any]] = {}
    for info in infos:  # a router takes the options of the agents it routes to, each agent keeping its default
        if info.route_rank is not None:
            own = {name: {k: v for k, v in prop.items() if k != "default"} for name, prop in info.options.items()}
            routed = {**own, **routed}
    return [replace(info, options=routed) if info.routes_agents else info for info in infos]


def option_schema(name: str) -> dict[str, dict[str, Any]]:
    """The options agent `name` accepts (a router: those of the agents it routes to)."""
    checked = check_agent(name)
    return next(info.options for info in agent_infos() if info.name == checked)


#: query_settings keys that are not agent options: the query's own limits and the default agent.
QUERY_LEVEL_KEYS = ("agent", "max_tokens", "timeout", "relevance_floor")


def check_query_settings(settings: Mapping[str, Any]) -> None:
    """query_settings checked against every agent's options: an unknown key is a ConfigurationError with
    the closest known one; a value out of an agent's bounds names the agent and the bound."""
    infos = [info for info in agent_infos() if not info.routes_agents]
    known = set(QUERY_LEVEL_KEYS) | {name for info in infos for name in info.options}
    for key, value in settings.items():
        if key not in known:
            raise ConfigurationError(unknown_option(key, known, "query_settings"))
        if value is None or key in QUERY_LEVEL_KEYS:
            continue
        for info in infos:
            if key in info.options:
                schema = getattr(info.cls, "Options", AgentOptions)
                validate_options(schema, {key: value}, f"query_settings ({info.name})", ConfigurationError)
    QueryLimits.check(settings, "query_settings", ConfigurationError)


def agent_names() -> list[str]:
    """Every agent name a front-end accepts, the router ("auto") first."""
    return [info.name for info in agent_infos()]


def check_agent(name: str, where: str = "agent", error: type[DeepSearcherError] = BadInputError) -> str:
    """`name` when an agent has it; otherwise `error` naming the allowed values and the closest one."""
    names = agent_names()
    if name in names:
        return name
    close = difflib.get_close_matches(str(name).lower(), names, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise error(f"Unknown {where} '{name}'. Allowed values: {', '.join(names)}.{hint}")


def build_agents(
    llm: BaseLLM, embedding_model: BaseEmbedding, vector_db: BaseVectorDB, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """One instance of every registered agent; routers route over the agents with a route rank."""
    infos = agent_infos()
    agents: dict[str, Any] = {}
    for info in infos:
        if not info.routes_agents:
            agents[info.name] = info.cls.from_settings(llm, embedding_model, vector_db, settings)
    routable = [agents[info.name] for info in infos if not info.routes_agents and info.route_rank is not None]
    for info in infos:
        if info.routes_agents:
            agents[info.name] = info.cls.from_settings(llm, embedding_model, vector_db, settings, agents=routable)
    return {info.name: agents[info.name] for info in infos}
