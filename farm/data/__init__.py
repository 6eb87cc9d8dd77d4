"""The dataset: its schema, the rows and what their columns mean, reading, writing, compacting and validating it."""
