import math

import numpy as np
import pytest
from scipy.stats import binom

from ctxbench_server.stats import bootstrap
from ctxbench_server.stats.summary import compute, median_ci_ranks


def coverage(n: int, j: int, k: int) -> float:
    """P(j <= B < k), B ~ Binomial(n, 1/2): the chance [X_(j), X_(k)] covers the median."""
    return float(binom.cdf(k - 1, n, 0.5) - binom.cdf(j - 1, n, 0.5))


def test_n10_is_between_2nd_and_9th_order_statistics() -> None:
    # the order-statistic ranks stay (the benchmark fill writes results as they were stored before)
    assert median_ci_ranks(10) == (2, 9)


def test_one_launch_of_10_gets_a_seeded_bootstrap_interval() -> None:
    xs = [float(x) for x in range(10, 0, -1)]  # unsorted input
    s = compute(xs, None, "r1")
    assert s.ci_method == bootstrap.CI_METHOD_BOOTSTRAP
    assert 1.0 <= s.ci_low < s.median < s.ci_high <= 10.0
    assert compute(xs, None, "r1") == s  # seeded by the result id: the same interval again


def test_three_launches_are_min_max_and_say_so() -> None:
    xs = [10.0, 10.2, 12.0, 12.1, 9.0, 9.3]
    s = compute(xs, [0, 0, 1, 1, 2, 2], "r")
    assert (s.ci_low, s.ci_high) == (9.0, 12.1) and s.ci_method == bootstrap.CI_METHOD_MINMAX
    # 6 launches: a 95 % interval of the launches, inside min-max
    s = compute(xs * 2, [i // 2 for i in range(12)], "r")
    assert s.ci_method == bootstrap.CI_METHOD_BOOTSTRAP and 9.0 <= s.ci_low <= s.median <= s.ci_high <= 12.1


@pytest.mark.parametrize(("n", "ranks"), [(6, (1, 6)), (9, (2, 8)), (20, (6, 15)), (50, (18, 33))])
def test_known_ranks(n: int, ranks: tuple[int, int]) -> None:
    assert median_ci_ranks(n) == ranks


@pytest.mark.parametrize("n", range(6, 301))
def test_ranks_reach_95_and_are_the_narrowest(n: int) -> None:
    ranks = median_ci_ranks(n)
    assert ranks is not None
    j, k = ranks
    assert k == n - j + 1
    assert coverage(n, j, k) >= 0.95
    if j + 1 <= n - j:  # one step narrower must fall short
        assert coverage(n, j + 1, k - 1) < 0.95


@pytest.mark.parametrize("n", range(1, 6))
def test_small_n_falls_back_to_min_max(n: int) -> None:
    assert median_ci_ranks(n) is None
    s = compute([3.0, 1.0, 2.0, 5.0, 4.0][:n])
    assert (s.ci_low, s.ci_high) == (s.min, s.max)
    assert s.ci_method == bootstrap.CI_METHOD_MINMAX


def test_location_and_spread_match_numpy() -> None:
    xs = [48.1, 48.3, 47.9, 49.0, 48.5, 48.2, 50.1]
    s = compute(xs)
    assert s.n == 7
    assert s.median == pytest.approx(48.3)
    assert s.mean == pytest.approx(np.mean(xs))
    assert s.stddev == pytest.approx(np.std(xs, ddof=1))
    assert s.cv == pytest.approx(np.std(xs, ddof=1) / np.mean(xs))
    assert (s.min, s.max) == (47.9, 50.1)
    assert s.ci_low <= s.median <= s.ci_high


def test_single_sample_and_zero_mean() -> None:
    s = compute([5.0])
    assert (s.n, s.median, s.stddev, s.ci_low, s.ci_high) == (1, 5.0, 0.0, 5.0, 5.0)
    assert compute([-1.0, 1.0]).cv is None


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf]])
def test_unusable_samples_raise(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        compute(bad)
