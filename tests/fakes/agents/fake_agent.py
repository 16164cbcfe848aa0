"""A stand-in for the coding-agent CLIs (claude, codex, copilot, pi): replays a recorded event stream.

Install it under an agent's name (`install_fake_agents` in tests/fakes/agents/__init__.py puts
executables named `claude`, `codex`, `copilot` and `pi` in a directory for PATH); it acts as the
agent its file name says (or `FAKE_AGENT_FAMILY`). It replays `streams/<family>.jsonl` (or the file
`FAKE_AGENT_STREAM` names) one event per line, flushed, so the runner sees events as an agent emits
them. Lines starting with `$` are directives, not events:

    {"$sleep": 0.2}                          wait (a tool runs)
    {"$write": {"path": "x.py", "text": "..."}}  change a file in the working directory
    {"$stderr": "text"}                      write to stderr
    {"$exit": 2}                             exit now with this code
    {"$request_permission": {...}}           (copilot) ask the client, wait for its answer
    {"$result": {...}} / {"$error": {...}}   (copilot) how the prompt request ends

Strings in events may hold `{{CWD}}` (the working directory) and `{{PROMPT}}` (the prompt, first
line). With `FAKE_AGENT_LOG` set, one JSON line per start is appended there: argv, cwd, stdin (or
the ACP requests received), and the environment variables named in `FAKE_AGENT_ENV` (comma list).

Copilot speaks ACP (JSON-RPC on stdin/stdout): it answers `initialize` and `session/new`, replays its
stream as `session/update` notifications on `session/prompt`, answers the prompt with the stream's
last line (`{"$result": {...}}`), then stays up until stdin closes, as the real server does.
"""

import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def family() -> str:
    return os.environ.get("FAKE_AGENT_FAMILY") or Path(sys.argv[0]).name


def stream_lines(name: str) -> list[str]:
    path = Path(os.environ.get("FAKE_AGENT_STREAM") or HERE / "streams" / f"{name}.jsonl")
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def substitute(value, values):
    if isinstance(value, str):
        for key, text in values.items():
            value = value.replace(key, text)
        return value
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    return value


def emit(event) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def directive(item, values) -> bool:
    """Apply a `$` directive; False when `item` is an event to emit."""
    if "$sleep" in item:
        time.sleep(float(item["$sleep"]))
    elif "$write" in item:
        spec = item["$write"]
        target = Path(os.getcwd()) / spec["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(substitute(spec["text"], values), encoding="utf-8")
    elif "$stderr" in item:
        sys.stderr.write(item["$stderr"] + "\n")
        sys.stderr.flush()
    elif "$exit" in item:
        sys.exit(int(item["$exit"]))
    else:
        return False
    return True


def log(entry) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if not path:
        return
    names = [n for n in os.environ.get("FAKE_AGENT_ENV", "").split(",") if n]
    env = {n: os.environ.get(n) for n in names}
    entry.update(
        {"family": family(), "argv": sys.argv[1:], "cwd": os.getcwd(), "env": env, "pid": os.getpid()}
    )
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def replay(name: str, prompt: str) -> None:
    values = {"{{CWD}}": os.getcwd(), "{{PROMPT}}": (prompt.strip().splitlines() or [""])[0]}
    for line in stream_lines(name):
        item = json.loads(line)
        if not directive(item, values):
            emit(substitute(item, values))


def prompt_of(name: str, stdin_text: str) -> str:
    if name in ("claude", "codex"):
        return stdin_text
    return sys.argv[-1] if len(sys.argv) > 1 else ""  # pi: the prompt is the last argument


def acp() -> None:
    """Copilot's ACP server side, scripted by the stream."""
    received = []
    values = {"{{CWD}}": os.getcwd(), "{{PROMPT}}": ""}
    lines = stream_lines("copilot")
    session = "sess-7f3a"
    for raw in sys.stdin:
        if not raw.strip():
            continue
        message = json.loads(raw)
        received.append(message)
        method = message.get("method")
        if method == "initialize":
            result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "authMethods": []}
            emit({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "session/new":
            values["{{CWD}}"] = message["params"]["cwd"]
            emit({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": session}})
        elif method == "session/prompt":
            blocks = message["params"]["prompt"]
            values["{{PROMPT}}"] = (blocks[-1]["text"].strip().splitlines() or [""])[0]
            result = {"stopReason": "end_turn"}
            for line in lines:
                item = json.loads(line)
                if "$result" in item:
                    result = item["$result"]
                elif "$error" in item:  # the prompt fails with a JSON-RPC error
                    emit({"jsonrpc": "2.0", "id": message["id"], "error": item["$error"]})
                    result = None
                    break
                elif "$request_permission" in item:
                    params = {"sessionId": session, **item["$request_permission"]}
                    emit(
                        {
                            "jsonrpc": "2.0",
                            "id": 900,
                            "method": "session/request_permission",
                            "params": params,
                        }
                    )
                    answer = json.loads(sys.stdin.readline())
                    received.append(answer)
                    if answer.get("id") != 900 or "result" not in answer:
                        sys.stderr.write("permission request was not answered\n")
                        sys.exit(5)
                elif not directive(item, values):
                    update = {"sessionId": session, "update": substitute(item, values)}
                    emit({"jsonrpc": "2.0", "method": "session/update", "params": update})
            if result is not None:
                emit({"jsonrpc": "2.0", "id": message["id"], "result": result})
            log({"received": received})
    # stdin closed: the client is done


def main() -> None:
    name = family()
    if name == "copilot":
        acp()
        return
    stdin_text = sys.stdin.read() if name in ("claude", "codex") else ""
    log({"stdin": stdin_text})
    replay(name, prompt_of(name, stdin_text))


if __name__ == "__main__":
    main()
