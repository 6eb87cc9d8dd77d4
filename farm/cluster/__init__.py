"""Ray: one worker per GPU, cells handed out and rows brought back to the driver, the only writer."""

from farm.measure import measurers

# The stand-in measurer (no GPU: fake timings, faults on request) for the tests and `farm simulate`, registered
# here, beside it, so that measure never names the cluster; whatever imports the cluster (the sweep, simulate) has it.
measurers.register("standin", "farm.cluster.standin:StandinMeasurer")
