"""The shell and file-editing tools the client runs (``shell``, ``local_shell``,
``apply_patch``), as chat backends see them and as their calls go back.

Each is offered as a function of its own name whose JSON arguments are the call's action:

- ``shell``: ``{"commands": [...], "timeout_ms": ..., "max_output_length": ...}``, called back as
  a ``shell_call`` whose ``action`` they are, streamed with ``response.shell_call_command.*``
  events (one added / delta / done per command, once the arguments are complete);
- ``local_shell``: ``{"command": [argv], "working_directory": ..., "timeout_ms": ..., "env": ...}``,
  called back as a ``local_shell_call`` (``action.type`` ``exec``);
- ``apply_patch``: ``{"type": "create_file" | "update_file" | "delete_file", "path": ...,
  "diff": ...}``, called back as an ``apply_patch_call`` whose ``operation`` they are.

Arguments a model gets slightly wrong are read leniently (a bare command string, a diff without
a type), so a call always becomes a well-formed item. Replayed calls are shown to the backend as
the same functions (:func:`chat_arguments`), their outputs as text (``output_text``).
"""

from __future__ import annotations

import json
from typing import Literal, TypeAlias

from agentloom.api.shell_items import (
    ApplyPatchCall,
    CreateFile,
    DeleteFile,
    LocalShellAction,
    LocalShellCall,
    PatchOperation,
    ShellAction,
    ShellCall,
    ShellEnvironment,
    ShellKindCall,
    UpdateFile,
)
from agentloom.inference import base as inf
from agentloom.json_types import JSONObject

ShellKind: TypeAlias = Literal["shell", "local_shell", "apply_patch"]
Status: TypeAlias = Literal["in_progress", "completed"]

_TIMEOUT: JSONObject = {"type": "integer", "description": "Stop after this many milliseconds."}
_SPECS: dict[ShellKind, inf.FunctionSpec] = {
    "shell": inf.FunctionSpec(
        name="shell",
        description=(
            "Run shell commands on the user's machine, in order; you are shown each command's "
            "stdout, stderr and exit code."
        ),
        parameters={
            "type": "object",
            "properties": {
                "commands": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The commands, each one shell command line.",
                },
                "timeout_ms": _TIMEOUT,
                "max_output_length": {
                    "type": "integer",
                    "description": "The most characters of output to be shown.",
                },
            },
            "required": ["commands"],
        },
    ),
    "local_shell": inf.FunctionSpec(
        name="local_shell",
        description="Run one command on the user's machine; you are shown its output.",
        parameters={
            "type": "object",
            "properties": {
                "command": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": 'The program and its arguments, e.g. ["ls", "-la"].',
                },
                "working_directory": {"type": "string"},
                "timeout_ms": _TIMEOUT,
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["command"],
        },
    ),
    "apply_patch": inf.FunctionSpec(
        name="apply_patch",
        description=(
            "Create, update or delete one file on the user's machine. For create_file the diff "
            "is the new file's lines, each prefixed with '+'; for update_file it is a V4A diff: "
            "hunks starting with '@@' (optionally followed by a line that locates the hunk), "
            "then context lines prefixed with ' ', removed lines with '-', added lines with '+'. "
            "delete_file needs no diff."
        ),
        parameters={
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["create_file", "update_file", "delete_file"]},
                "path": {"type": "string", "description": "The file, relative to the project."},
                "diff": {"type": "string"},
            },
            "required": ["type", "path"],
        },
    ),
}


def shell_spec(kind: ShellKind) -> inf.FunctionSpec:
    """The function a backend is offered for the client's ``kind`` tool."""
    return _SPECS[kind]


def shell_item(
    kind: ShellKind, *, id: str, call_id: str, arguments: str, status: Status
) -> ShellKindCall:
    """The item a call of ``kind`` with these (complete, or for ``in_progress`` any) arguments
    becomes."""
    values = _object(arguments) if status == "completed" else {}
    if kind == "shell":
        action = _shell_action(values)
        local = ShellEnvironment()
        return ShellCall(id=id, call_id=call_id, action=action, environment=local, status=status)
    if kind == "local_shell":
        argv = _local_action(values)
        return LocalShellCall(id=id, call_id=call_id, action=argv, status=status)
    operation = _operation(values)
    return ApplyPatchCall(id=id, call_id=call_id, operation=operation, status=status)


def chat_arguments(item: ShellKindCall) -> tuple[str, str]:
    """The function name and JSON arguments a backend is shown for a replayed call."""
    if isinstance(item, ShellCall):
        return "shell", item.action.model_dump_json(exclude_none=True)
    if isinstance(item, LocalShellCall):
        action = item.action.model_dump(exclude_none=True, exclude={"type", "user"})
        return "local_shell", json.dumps(action)
    return "apply_patch", item.operation.model_dump_json(exclude_none=True)


def _object(arguments: str) -> JSONObject:
    """The arguments as an object; text that is not one is taken as the main argument."""
    try:
        value: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"": arguments}
    if isinstance(value, dict):
        return value
    return {"": value}  # type: ignore[dict-item]


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _shell_action(values: JSONObject) -> ShellAction:
    commands = values.get("commands", values.get("command", values.get("")))
    return ShellAction(
        commands=_strings(commands),
        timeout_ms=_integer(values.get("timeout_ms")),
        max_output_length=_integer(values.get("max_output_length")),
    )


def _local_action(values: JSONObject) -> LocalShellAction:
    env = values.get("env")
    directory = values.get("working_directory")
    return LocalShellAction(
        command=_strings(values.get("command", values.get(""))),
        env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
        timeout_ms=_integer(values.get("timeout_ms")),
        working_directory=directory if isinstance(directory, str) else None,
    )


def _operation(values: JSONObject) -> PatchOperation:
    nested = values.get("operation")
    if isinstance(nested, dict):
        values = nested
    path, diff, kind = values.get("path"), values.get("diff", values.get("")), values.get("type")
    path = path if isinstance(path, str) else ""
    diff = diff if isinstance(diff, str) else ""
    if kind == "delete_file":
        return DeleteFile(path=path)
    if kind == "create_file":
        return CreateFile(path=path, diff=diff)
    return UpdateFile(path=path, diff=diff)
