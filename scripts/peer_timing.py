"""How the peer scripts time a call: `warm_ups` calls first (compilation),
then `reps` timed calls; the median, min and max in seconds. Each call must
wait for its results itself (block_until_ready, np.asarray, float), as
bench_report's per-call figures do."""
import time


def per_call(f, reps, warm_ups=3):
    for _ in range(warm_ups):
        f()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]
