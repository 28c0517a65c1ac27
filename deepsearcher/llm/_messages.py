"""Turning OpenAI-style messages into the shapes of other APIs."""

from __future__ import annotations

from deepsearcher.types.json import JSONObject


def text_of(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a block list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type", "text") == "text" and block.get("text") is not None:
                    parts.append(str(block["text"]))
            elif block is not None:
                parts.append(str(block))
        return "\n".join(parts)
    return str(content)


def split_system(
    messages: list[JSONObject],
) -> tuple[str | None, list[tuple[str, str]]]:
    """(system text or None, [(role, text)]) with roles 'user'/'assistant' alternating,
    starting with 'user': system messages are joined, consecutive same-role turns merged,
    other roles (tool, function, developer) treated as user turns."""
    system_parts: list[str] = []
    turns: list[tuple[str, str]] = []
    for message in messages:
        role = message.get("role", "user")
        text = text_of(message.get("content"))
        if role in ("system", "developer"):
            if text:
                system_parts.append(text)
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1] + "\n\n" + text)
        else:
            turns.append((role, text))
    if not turns or turns[0][0] != "user":
        turns.insert(0, ("user", "Follow the instructions." if not turns else "Continue."))
    system = "\n\n".join(system_parts) if system_parts else None
    return system, turns
