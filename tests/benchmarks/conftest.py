"""The benchmarks' tests that need a coordinator use the integration tests' fixtures."""

from tests.integration.conftest import coordinator, embedder  # noqa: F401
