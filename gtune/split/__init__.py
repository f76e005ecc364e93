"""Splitting one kernel's work across CPU and GPU in proportion to their tuned speeds.

Not built yet.
"""
