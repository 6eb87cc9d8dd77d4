"""What the host-planner tests share: plans made for an H100's 132 SMs by a stage's launch."""

from kernels.stage import Launch

H100_SMS = 132


def blocks(launch: Launch, m: int, n: int) -> int:
    """The blocks `launch` puts on an H100 at m x n."""
    return launch.grid(m, n, H100_SMS)[0]


def planned(launch: Launch, m: int, n: int, k: int) -> dict:
    """The launch arguments `launch` plans on an H100 at m x n x k."""
    return launch.plan(m, n, k, H100_SMS).args


def shape_id(shape: tuple) -> str:
    """A test id for an (m, n, k) shape: 4096x4096x4096."""
    return "x".join(map(str, shape))
