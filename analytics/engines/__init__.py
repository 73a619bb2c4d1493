"""Engines that run the analytics jobs somewhere other than this process: the same partition
and day functions (`analytics.matching.batches`, `analytics.matching.day`) scheduled by a
distributed engine over the lake (`core.lake`). See docs/adr/0080-engines-over-the-lake.md.

Nothing here reimplements a step: an engine only cuts the input, ships it to the functions the
local engine calls, and files their frames in the lake.
"""
