"""`python -m partsafe`."""

from partsafe.checker.cli.main import main

main()
