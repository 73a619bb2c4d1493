"""The ground of Pontual: settings, the error hierarchy, the store and the regulation profiles.

`core` imports none of the other Pontual packages.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pontual")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
