"""A real model on this machine: build llama.cpp's server, install small GGUF models, run the agent.

Not part of the product or of `make test`; `make real-model` runs it (docs/testing.md).
"""
