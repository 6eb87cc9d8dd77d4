"""One cell on one GPU: compile, verify, time and watch the GPU; the profiler on one GPU; the measurers a plan may pick."""
