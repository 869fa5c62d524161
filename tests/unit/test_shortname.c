// SPDX-License-Identifier: GPL-2.0
/*
 * reports/symbols/shortname.c on names as the demangler (lib/demangle.c, libiberty) writes them: each
 * mangled name is demangled here first, so the long form is the one a report holds (and keeps
 * whole in summary.json), and its short form the one summary.txt prints. Also names that are
 * not C++ or Rust, which stay as they are, and a buffer too small.
 */
#include <string.h>

#include "demangle.h"
#include "shortname.h"
#include "testlib.h"

static const struct {
	const char *mangled, *whole, *shortened;
} cases[] = {
	/* A lambda inside a template instance, as PyTorch's fill kernel is built. */
	{ "_ZZN2at6native11fill_kernelINS0_11FillFunctorIfEEEEvRNS_14TensorIteratorEENKUlvE_clEv",
	  "at::native::fill_kernel<at::native::FillFunctor<float> >(at::TensorIterator&)::"
	  "{lambda()#1}::operator()() const",
	  "at::native::fill_kernel<...>(...)::{lambda()#1}::operator()() const" },
	/* A lambda with parameters, in an anonymous namespace. */
	{ "_ZZN12_GLOBAL__N_13runEvENKUliE_clEi",
	  "(anonymous namespace)::run()::{lambda(int)#1}::operator()(int) const",
	  "(anonymous namespace)::run()::{lambda(...)#1}::operator()(...) const" },
	{ "_ZN2gs2io5QueueINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE4pushERKS7_",
	  "gs::io::Queue<std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> > >::push(std::__cxx11::basic_string<char, "
	  "std::char_traits<char>, std::allocator<char> > const&)",
	  "gs::io::Queue<...>::push(...)" },
	/* A function template: its return type stays. */
	{ "_Z3maxIiET_S0_S0_", "int max<int>(int, int)", "int max<...>(...)" },
	/* Operators keep their characters. */
	{ "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
	  "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
	  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
	  "std::basic_ostream<...>& std::operator<< <...>(...)" },
	{ "_ZN2gs2io4LockltERKS1_", "gs::io::Lock::operator<(gs::io::Lock const&)",
	  "gs::io::Lock::operator<(...)" },
	{ "_ZN2gs2io4Lock3getEv.cold", "gs::io::Lock::get() [clone .cold]",
	  "gs::io::Lock::get() [clone .cold]" },
	/* Rust v0: generic arguments go, a qualified path's brackets stay, closures stay. */
	{ "_RNvXs_Csj6gjteTz5uu_1bINtB4_3JobhENtB4_4Work3runB4_", "<b::Job<u8> as b::Work>::run",
	  "<b::Job<...> as b::Work>::run" },
	{ "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Csj6gjteTz5uu_1b",
	  "std::rt::lang_start::<()>::{closure#0}", "std::rt::lang_start::<...>::{closure#0}" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace28___rust_begin_short_backtraceFEuuECsj6gjteTz5u"
	  "u_1b",
	  "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>",
	  "std::sys::backtrace::__rust_begin_short_backtrace::<...>" },
	/* Rust legacy. */
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..traits.."
	  "iterator..Iterator$GT$4fold17h7974745ae7abebe1E",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold",
	  "<core::iter::adapters::map::Map<...> as core::iter::traits::iterator::Iterator>::fold" },
};

/* Names that are not C++ or Rust: as they are. */
static const char *const unchanged[] = {
	"malloc_trim",	       "libc.so.6+0x1a1efa", "[lock tracker_lock]",
	"train (train.py:42)", "by compute_input",   "",
};

int main(void)
{
	char buf[SHORTNAME_MAX], small[12];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *whole = demangle(cases[i].mangled);

		CHECK(whole && !strcmp(whole, cases[i].whole), "%s: %s, expected %s",
		      cases[i].mangled, whole, cases[i].whole);
		CHECK(!strcmp(shortname(whole, buf, sizeof(buf)), cases[i].shortened),
		      "%s: %s, expected %s", whole, buf, cases[i].shortened);
		free(whole);
	}
	for (size_t i = 0; i < sizeof(unchanged) / sizeof(unchanged[0]); i++)
		CHECK(!strcmp(shortname(unchanged[i], buf, sizeof(buf)), unchanged[i]), "%s: %s",
		      unchanged[i], buf);
	CHECK(!shortname(NULL, buf, sizeof(buf)), "NULL");
	/* Cut short in a buffer too small, still a string. */
	CHECK(!strcmp(shortname("gs::io::Queue<int>::push(int)", small, sizeof(small)),
		      "gs::io::Que"),
	      "%s", small);
	CHECK(!strcmp(shortname("gs::io::Lock<int>", small, sizeof(small)), "gs::io::Loc"), "%s",
	      small);
	TEST_PASS();
}
