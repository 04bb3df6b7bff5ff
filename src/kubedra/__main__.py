"""``python -m kubedra``: the same as the ``kubedra`` command."""

from kubedra.cli.main import main

main()
