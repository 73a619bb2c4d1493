"""The face of Pontual: the `pontual` command line, the real-time feed server, demo wiring.

Nothing imports this package.
"""
