"""Fault containment for target plugins: whatever a third-party target's `invoke` raises (not only
`TargetError`), or a reply that is not a `TargetResponse`, becomes a `TargetError` naming the plugin,
its distribution and what went wrong, so the runner records an execution error for that one test and
the run goes on (its summary, reports and gates are written; exit 3 at worst).

Built-in targets are not wrapped: an exception escaping one of them is a bug of agentv-ci (exit 4,
with the traceback saved).
"""

from __future__ import annotations

from typing import Any

from agentv_ci.errors import AgentvCiError, TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetPlugin, TargetRequest
from agentv_ci.plugins.checks import is_builtin
from agentv_ci.plugins.registry import describe_plugin, fault_text

__all__ = ["invoke_target"]


def _fault(cls: type[Any], what: str) -> TargetError:
    return TargetError(f"{describe_plugin('target', cls)} failed: {what}")


async def invoke_target(target: TargetPlugin, request: TargetRequest) -> TargetResponse:
    """`target.invoke(request)`, a third-party target's faults turned into `TargetError`.

    Cancellation (a deadline, Ctrl-C) passes through untouched: it is not the plugin's fault."""
    cls = type(target)
    if is_builtin(cls):
        return await target.invoke(request)
    try:
        response = await target.invoke(request)
    except AgentvCiError:
        raise  # TargetError and the other expected errors: the plugin said what went wrong
    except Exception as exc:
        raise _fault(cls, fault_text(exc)) from exc
    if not isinstance(response, TargetResponse):
        raise _fault(cls, f"`invoke` returned {type(response).__name__}, not a TargetResponse")
    return response
