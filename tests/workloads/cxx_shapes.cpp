// SPDX-License-Identifier: GPL-2.0
// A C++ workload with namespaces, class templates and function templates,
// for the comparison with perf (tests/integration/test_perf_cxx.sh): five
// functions do work in a fixed ratio (about 33, 25, 21, 13 and 5% of the
// samples here), so that their shares do not depend on the run.
// Usage: cxx_shapes SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace shapes {
namespace detail {

template <typename T> struct Accumulator {
	T sum{};
	// a loop of N steps; noinline so that every function is a symbol
	__attribute__((noinline)) T add_squares(const std::vector<T> &v, int rounds)
	{
		for (int r = 0; r < rounds; r++)
			for (const T &x : v)
				sum += x * x + T(r);
		return sum;
	}
};

} // namespace detail

template <typename T> class Polygon {
public:
	explicit Polygon(int n) : pts(n) { for (int i = 0; i < n; i++) pts[i] = T(i % 7); }
	__attribute__((noinline)) T perimeter(int rounds) const
	{
		T p{};
		for (int r = 0; r < rounds; r++)
			for (size_t i = 1; i < pts.size(); i++)
				p += (pts[i] - pts[i - 1]) * (pts[i] + T(r));
		return p;
	}
	std::vector<T> pts;
};

template <typename T, int K> __attribute__((noinline)) T scaled_sum(const std::vector<T> &v, int rounds)
{
	T s{};
	for (int r = 0; r < rounds; r++)
		for (const T &x : v)
			s += x * T(K) - T(r & 3);
	return s;
}

} // namespace shapes

volatile double sink;

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	std::vector<double> vd(4096, 1.5);
	std::vector<long> vl(4096, 3);
	shapes::detail::Accumulator<double> acc_d;
	shapes::detail::Accumulator<long> acc_l;
	shapes::Polygon<double> poly(4096);
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);

	/* Each function runs once or twice a round, as a generator draws: a
	 * round of fixed length (about 100 us) kept the same phase against a
	 * 999 Hz clock for a whole run, and two profilers sampling one run
	 * at different phases saw shares 3-6 points apart. */
	unsigned int draw = 12345;
	auto times = [&draw]() { draw = draw * 1103515245u + 12345u; return 1 + (draw >> 16) % 2; };
	while (std::chrono::steady_clock::now() < end) {
		for (unsigned int k = times(); k; k--)
			sink = acc_d.add_squares(vd, 8);
		for (unsigned int k = times(); k; k--)
			sink = poly.perimeter(5);
		for (unsigned int k = times(); k; k--)
			sink = shapes::scaled_sum<double, 3>(vd, 6);
		for (unsigned int k = times(); k; k--)
			sink = (double)acc_l.add_squares(vl, 4);
		for (unsigned int k = times(); k; k--)
			sink = shapes::scaled_sum<long, 5>(vl, 2);
	}
	printf("%g\n", (double)sink);
	return 0;
}
