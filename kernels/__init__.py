"""The kernel catalog: CUDA sources in numbered ladder order, described by Stage objects."""
