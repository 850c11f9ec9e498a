"""The `partsafe` command line (click): options, one call into the checker, printing and the exit
status, nothing else.

- main.py     the group and the model commands: check, zoo, replay, export, plan, specs,
              explain, checkpoint, bench
- logs.py     the log commands: validate, parse, simulate
- options.py  options several commands share
- views.py    terminal views the commands print
"""
