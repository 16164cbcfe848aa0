"""JavaScript's text semantics (RegExp, case folding, Number, Date) as AgentV's TypeScript graders apply
them, so a grader here matches the reference byte for byte. A leaf below loading: `validate` checks a
regex with the same translator the graders run."""
