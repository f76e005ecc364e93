"""Data-loading technique prediction from static stencil features (random forest).

Not built yet: ``gtune run --technique auto`` tries every technique instead (the oracle).
"""
