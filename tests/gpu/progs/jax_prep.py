# A JAX loop whose host prepares each batch in numpy (a 1024x4096 draw of normals, each row
# sorted: ~80 ms), puts it on the device and runs a jitted step of 8 matmuls and a tanh (under
# 1 ms of GPU), then waits for it with block_until_ready(): XLA launches a CUDA graph and waits
# in a futex, woken through the driver's event thread, never with a driver synchronize. Prints
# "ready PID" after two warm-up steps, then runs for SECONDS.
#   usage: jax_prep.py SECONDS
import os, sys, time
import numpy as np
import jax
import jax.numpy as jnp

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 8
rng = np.random.default_rng(0)
w = jax.device_put(rng.standard_normal((4096, 4096)).astype(np.float32) / 64)


@jax.jit
def step(x, w):
    for _ in range(8):
        x = x @ w
    return jnp.tanh(x)


def make_batch():
    x = rng.standard_normal((1024, 4096)).astype(np.float32)
    return np.sort(x, axis=1)


for _ in range(2):
    step(jax.device_put(make_batch()), w).block_until_ready()
print("ready %d" % os.getpid(), flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < secs:
    step(jax.device_put(make_batch()), w).block_until_ready()
    n += 1
print("steps %d" % n, flush=True)
