"""The results store: a run's rows written, streamed, read back and sorted (index.jsonl, summary.json),
its plan, its sidecars, and the tallies and totals counted from them. Reporters render what this
package holds; the gate decides on its counts. It imports only the floors below it (docs/architecture.md)."""
