"""`deepsearcher query`: ask a question, watch the agent's steps, read the cited answer."""

from __future__ import annotations

import asyncio
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deepsearcher.cli.common import (
    ConfigOption,
    JsonOption,
    activity,
    console,
    err_console,
    handle_errors,
    print_json,
    setup,
)
from deepsearcher.cli.warm_up import warm_up_in_background
from deepsearcher.types.json import JSONObject

if TYPE_CHECKING:
    from deepsearcher.agent.events import StepEvent
    from deepsearcher.app.querying import QueryPlan


class AnswerFormat(str, Enum):
    """What `query` prints: the short answer and the cited explanation, or the short answer alone."""

    REPORT = "report"
    SHORT = "short"


AGENT_HELP = "A registered agent: auto, deep, chain, naive or a plugin's (default: query_settings.agent, else auto)."
NO_LLM_HINT = (
    "With no key, a model runs in this process: provider LlamaCpp, model qwen2.5-coder-0.5b-instruct "
    "(pip install 'deepsearcher[llamacpp]'; `make demo-local` in a checkout), in your --config file."
)


def describe_step(event: StepEvent) -> str | None:
    """One human line per step event (the words the web page shows too); None for answer tokens."""
    from deepsearcher.agent.events import EventKind, describe

    if event.kind in (EventKind.ANSWER_TOKEN, "result"):
        return None
    return describe(event).line()


def parse_options(pairs: list[str]) -> JSONObject:
    """`NAME=VALUE` pairs; a VALUE that reads as JSON (20, true, 0.5, "x") is that value, else the text
    itself. The agent's schema checks them afterwards, as it checks REST's and MCP's `options`."""
    import json

    from deepsearcher.types.errors import BadInputError

    options: JSONObject = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise BadInputError(f"--option takes NAME=VALUE, got '{pair}'.")
        try:
            options[name.strip()] = json.loads(text)
        except ValueError:
            options[name.strip()] = text
    return options


def query(
    question: Annotated[str, typer.Argument(help="The question to research.")],
    agent: Annotated[str | None, typer.Option("--agent", help=AGENT_HELP)] = None,
    max_iter: Annotated[int | None, typer.Option("--max-iter", help="Maximum research iterations.")] = None,
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            "--collection-name",
            help="Search only this collection (repeatable).",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", help="Stop searching after this many tokens and answer."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            help="Overall deadline in seconds (default: query_settings.timeout, else 300).",
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            help="An agent option as NAME=VALUE (repeatable), e.g. -o top_k=20; `deepsearcher agents` lists them.",
        ),
    ] = None,
    web: Annotated[
        bool,
        typer.Option(
            "--web",
            help="Research the web too (provide_settings.web_search; the query sent is your question, never "
            "your documents' text). Same as -o web=always; -o web=auto lets the collection router decide.",
        ),
    ] = False,
    config: ConfigOption = None,
    as_json: JsonOption = False,
    answer_format: Annotated[
        AnswerFormat,
        typer.Option(
            "--format",
            help="report: the short answer, then the cited explanation; short: the few words that answer, "
            "with their sources.",
        ),
    ] = AnswerFormat.REPORT,
) -> None:
    """Research QUESTION over your collections and print a cited answer."""
    with activity("Preparing", quiet=as_json):
        from deepsearcher.agent.catalog import check_agent
        from deepsearcher.app.querying import QueryRequest, plan_query

        with handle_errors():
            options = parse_options(option or [])
            if agent is not None:
                check_agent(agent)  # a wrong name is refused before any model loads
        components = setup(config, llm=True)
        with handle_errors():
            request = QueryRequest.create(
                question=question,
                agent=agent,
                collections=collection,
                max_iter=max_iter,
                max_tokens=max_tokens,
                timeout=timeout,
                options=options,
                web="always" if web else None,
            )
            plan = plan_query(components, request, no_llm_hint=NO_LLM_HINT)
        warm_up_in_background(components, question)
    with handle_errors():
        result = asyncio.run(_run(plan, live=not as_json))
    if as_json:
        print_json(result.to_dict())
        return
    from rich.markdown import Markdown  # markdown-it and pygments: ~0.2 s that other commands skip
    from rich.markup import escape

    from deepsearcher.agent.result import source_line

    console.print()
    if result.short_answer:
        console.print(f"[bold]Answer:[/] {escape(result.short_answer)}", highlight=False)
    if answer_format is AnswerFormat.REPORT or result.abstained or not result.short_answer:
        console.print(Markdown(result.answer))
    cited = [source for source in result.sources if source.cited] or result.sources
    if cited:
        console.print("\n[bold]Sources[/]")
        for source in cited:
            console.print(source_line(source), highlight=False, markup=False, soft_wrap=True)
    usage = result.usage
    console.print(
        f"\n[dim]{result.agent} · {usage.calls} LLM calls · {usage.total_tokens} tokens · "
        f"{result.wall_seconds:.1f} s[/]"
    )


async def _run(plan: QueryPlan, live: bool) -> Any:
    from deepsearcher.app.querying import ask_events

    result = None
    answering = False
    async for event in ask_events(plan):
        if event.kind == "result":
            result = event.data["result"]
        elif live and event.kind == "answer_token":
            if not answering:
                err_console.print("[dim]writing the answer…[/]")
                answering = True
        elif live and (line := describe_step(event)):
            err_console.print(f"[cyan]›[/] {line}", highlight=False)
    return result
