"""Research: experiments and measurements that are not part of the product (see README.md).

The product packages (`memory`, `agent`, `ui`, `pages`, `app.py`) never import this package;
`tests/unit/test_architecture.py` checks it. Run a module from the project root:
`python -m lab.<name> --help`.
"""
