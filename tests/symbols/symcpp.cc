// SPDX-License-Identifier: GPL-2.0
/*
 * A small C++ shared object for tests/unit/test_symbols.c, built with -g by g++: a method of a
 * class in a namespace, a template instance, and a method inlined into another, so that the
 * symbolizer's names are checked as a C++ programmer writes them, from .symtab and from DWARF.
 */
namespace symcpp {

struct Widget {
	int n;
	int spin(int k);
	inline __attribute__((always_inline)) int step(int k, void **ret);
};

template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get() const;
};

template <typename T> T Box<T>::get() const
{
	__asm__ volatile("" ::: "memory");
	return v;
}

__attribute__((noinline)) void *where(void)
{
	return __builtin_return_address(0);
}

int Widget::step(int k, void **ret)
{
	*ret = where(); /* the return address into this inlined method */
	return n + k;
}

__attribute__((noinline)) int Widget::spin(int k)
{
	void *ret;
	int r = step(k, &ret);

	__asm__ volatile("" ::: "memory");
	return r + (ret != nullptr);
}

template struct Box<long>;

} // namespace symcpp

/* Called by the test, with C linkage; the C++ functions it finds by their mangled names. */
extern "C" {
static void *inlined_ret;

int symcpp_run(int k)
{
	symcpp::Widget w{ k };
	void *ret;
	int r = w.step(k, &ret);

	inlined_ret = ret;
	return r + w.spin(k);
}

void *symcpp_inlined_ret(void)
{
	return inlined_ret;
}
}
