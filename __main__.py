"""`python -m partsafe`."""

from partsafe.checker.cli import main

main()
