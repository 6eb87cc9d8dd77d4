"""Ray: one worker per GPU, cells handed out and rows brought back to the driver, the only writer."""
