# The agentv-ci container (also used by the GitHub Action).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    XDG_CACHE_HOME=/opt/agentv-ci/cache \
    TYPER_USE_RICH=0

# An empty, write-disabled entry-point cache: stevedore's cache can go stale after plugin installs.
RUN mkdir -p /opt/agentv-ci/cache/python-entrypoints \
 && touch /opt/agentv-ci/cache/python-entrypoints/.disable \
 && apt-get update && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*

COPY pyproject.toml README.md /src/
COPY src /src/src
RUN pip install /src && rm -rf /src

WORKDIR /github/workspace
ENTRYPOINT ["agentv-ci"]
CMD ["--help"]
