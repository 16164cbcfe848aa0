"""`depends_on` between the tests of one suite: every id must exist, and there must be no cycle."""

from __future__ import annotations

from agentv_ci.loading.context import LoadContext, Node, did_you_mean
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Test


def _depends_node(where: Node | SourceLocation) -> Node | None:
    """The `depends_on` value next to a test's `id` node (None for tests imported from another suite)."""
    if not isinstance(where, Node) or not where.path or where.path[-1] != "id":
        return None
    return Node(where.doc, (*where.path[:-1], "depends_on"))


def check_dependencies(built: list[tuple[Test, Node | SourceLocation]], ctx: LoadContext) -> None:
    """E103 for an unknown id (with a suggestion) and for each dependency cycle (reported once)."""
    with_deps = [(test, where) for test, where in built if test.depends_on]
    if not with_deps:
        return
    ids = {test.id for test, _ in built}
    nodes: dict[str, Node] = {}
    graph: dict[str, list[str]] = {}
    for test, where in with_deps:
        node = _depends_node(where)
        if node is None:
            continue
        nodes.setdefault(test.id, node)
        graph[test.id] = [d for d in test.depends_on if d in ids]
        written_as_list = len(test.depends_on) > 1 or _is_list(node)
        for index, dep in enumerate(test.depends_on):
            if dep in ids:
                continue
            suggestion = did_you_mean(dep, ids)
            ctx.error(
                "E103",
                f"depends_on names an unknown test {dep!r}",
                node.child(index) if written_as_list else node,
                hint=f"did you mean `{suggestion}`?" if suggestion else None,
            )
    _report_cycles(graph, nodes, ctx)


def _is_list(node: Node) -> bool:
    # A list's first item has its own position; a plain string does not.
    return node.doc.locate((*node.path, 0)) != node.doc.locate(node.path)


def _report_cycles(graph: dict[str, list[str]], nodes: dict[str, Node], ctx: LoadContext) -> None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    seen_cycles: set[frozenset[str]] = set()
    for start in graph:
        if state.get(start):
            continue
        path: list[str] = [start]
        iterators = [iter(graph.get(start, []))]
        state[start] = 1
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt) :]
                members = frozenset(cycle)
                if members not in seen_cycles:
                    seen_cycles.add(members)
                    first = cycle[0]
                    chain = " -> ".join([*cycle, first])
                    ctx.error("E103", f"dependency cycle: {chain}", nodes[first])
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(graph.get(nxt, [])))
