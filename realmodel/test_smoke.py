"""Smoke test of the built llama-server with SmolLM2 behind the Ollama adapter:
`make real-model-smoke` (not part of `make test`: the build takes 20+ minutes)."""

from __future__ import annotations

import ollama

from realmodel.build import server_binary
from realmodel.run import llama_server
from tests.fakes.llama_adapter import LlamaAdapter


def test_the_built_llama_server_answers_through_the_adapter() -> None:
    assert server_binary().exists(), (
        f"llama-server is not built ({server_binary()}): `make real-model` builds it"
    )
    from realmodel.models import install

    smol = next(m for m in install() if m.name.startswith("smollm2"))
    with llama_server(server_binary(), smol, 1024, server_binary().parent / "smoke.log") as url:
        with LlamaAdapter(url, smol.name) as adapter:
            client = ollama.Client(host=adapter.url)
            info = client.show(smol.name).modelinfo or {}
            assert info["smollm2.context_length"] == 1024
            reply = client.chat(
                smol.name,
                messages=[{"role": "user", "content": "Say hello."}],
                options={"num_predict": 8, "temperature": 0},
            )
    assert reply.message.content and reply.eval_count and reply.prompt_eval_count
    assert reply.done_reason in ("stop", "length")
