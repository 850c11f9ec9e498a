"""Pictures and reports of runs and verdicts: swim-lane SVG (`swimlane`)."""
