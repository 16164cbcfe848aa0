# The agentv-ci container: the CLI (`docker run IMAGE run evals/`) and the GitHub Action, whose
# action.yml sets the entry point to `agentv-ci-action` (reads INPUT_* itself; no shell).
FROM python:3.11-slim

# Byte code is compiled once at install (pip does); nothing is written to site-packages at run time.
# The stevedore entry-point cache is disabled (an empty, marked directory): a plugin installed in a
# derived image (`RUN pip install my-grader`) is always seen.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    XDG_CACHE_HOME=/opt/agentv-ci/cache \
    TYPER_USE_RICH=0

# git: changed-file selection and baseline worktrees. No compilers: every dependency ships a wheel.
RUN mkdir -p /opt/agentv-ci/cache/python-entrypoints \
 && touch /opt/agentv-ci/cache/python-entrypoints/.disable \
 && apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*

# The dependencies first, in a layer of their own: read from pyproject.toml (with the build backend),
# they are installed again only when pyproject.toml changes, not on every change to the source.
COPY pyproject.toml README.md /src/
RUN python -c "import tomllib; p = tomllib.load(open('/src/pyproject.toml', 'rb')); \
print('\n'.join(p['project']['dependencies'] + p['build-system']['requires']))" > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt \
 && rm -rf /tmp/requirements.txt /root/.cache

# The core and the in-repo plugins (the HTML reporter, the JSON Schema grader, the text-stats grader),
# installed in one pip call so each plugin's `agentv-ci` requirement is this very source tree (its
# dependencies and build backend are in place already, so nothing is fetched).
COPY src /src/src
COPY plugins /src/plugins
RUN pip install --no-build-isolation /src /src/plugins/html-report /src/plugins/jsonschema-grader /src/plugins/text-stats-grader \
 && rm -rf /src /root/.cache \
 && agentv-ci --version \
 && agentv-ci plugins --json >/dev/null

WORKDIR /github/workspace
ENTRYPOINT ["agentv-ci"]
CMD ["--help"]
