"""What differs per CI platform (GitLab here; GitHub keeps its own `github/` package): the pieces a
platform adapter calls. It sits at the level of `action/` and `github/`, above the pipeline."""
