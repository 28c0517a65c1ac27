"""The registered agents: their names for every front-end, and building them from query_settings.

Agents are providers of the feature "agent" (`@register_provider("agent", "deep")` on the
class), so the CLI's `--agent` choices, the request models, the MCP tool schema, the
evaluation runner and the web page all read the same list and a new agent is one file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deepsearcher.config.registry import ProviderRegistry
from deepsearcher.types.errors import BadInputError, DeepSearcherError

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "iterative": self.iterative,
        }


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
            )
        )
    return sorted(infos, key=_order)


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


def build_agents(llm: Any, embedding_model: Any, vector_db: Any, settings: Mapping[str, Any]) -> dict[str, Any]:
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
