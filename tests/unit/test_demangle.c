// SPDX-License-Identifier: GPL-2.0
/*
 * lib/demangle.c on names g++ 12 and rustc 1.95 wrote into object files, each with the name
 * its programmer would use: C++ as c++filt prints it; Rust's legacy names (the default for a
 * crate's own symbols) without the hash and with their escapes undone; Rust's v0 names (rustc -C
 * symbol-mangling-version=v0, and the standard library 1.95 ships) as Rust's own backtraces print
 * them, without crate disambiguators. Plain C names and malformed ones are not demangled. The
 * demangler's cache answers by address.
 * tests/symbols/symcpp.cc checks the same through the symbolizer on a library g++ builds.
 */
#include <string.h>

#include "demangle_int.h"
#include "testlib.h"

static const struct {
	const char *mangled, *want;
} cases[] = {
	{ "_Z13operator_testPFidEm", "operator_test(int (*)(double), unsigned long)" },
	{ "_ZN2gs2io4Lock3getEv", "gs::io::Lock::get()" },
	{ "_ZN2gs2io4LockD2Ev", "gs::io::Lock::~Lock()" },
	{ "_ZNK2gs2io4Lock4waitEi", "gs::io::Lock::wait(int) const" },
	{ "_ZN2gs2io5QueueINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEE4pushERKS7_",
	  "gs::io::Queue<std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> > >::push(std::__cxx11::basic_string<char, "
	  "std::char_traits<char>, std::allocator<char> > const&)" },
	{ "_ZnwmPv", "operator new(unsigned long, void*)" },
	/* A GCC clone keeps its suffix. */
	{ "_ZN2gs2io4Lock3getEv.cold", "gs::io::Lock::get() [clone .cold]" },
	/* Rust, legacy: the hash goes, the escapes are undone. */
	{ "_ZN1r7Counter4bump17h49589b57aea71b42E", "r::Counter::bump" },
	{ "_ZN1r12closure_user28_$u7b$$u7b$closure$u7d$$u7d$17h032c2b594fcf40bfE",
	  "r::closure_user::{{closure}}" },
	{ "_ZN49_$LT$r..Counter$u20$as$u20$core..fmt..Display$GT$3fmt17h3930680ef11ced80E",
	  "<r::Counter as core::fmt::Display>::fmt" },
	{ "_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..traits.."
	  "iterator..Iterator$GT$4fold17h7974745ae7abebe1E",
	  "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold" },
	{ "_ZN4core3ptr9const_ptr33_$LT$impl$u20$$BP$const$u20$T$GT$13is_aligned_to17hc183c8cb0dd5"
	  "3b80E",
	  "core::ptr::const_ptr::<impl *const T>::is_aligned_to" },
	/* Made local by LLVM for inlining across modules: the suffix goes as well. */
	{ "_ZN1r7Counter4bump17h49589b57aea71b42E.llvm.12345678", "r::Counter::bump" },
	/* Rust, v0: a function, an inherent method, a trait method of a generic type. */
	{ "_RNvCs2OpA4fNwd7R_1r12closure_user", "r::closure_user" },
	{ "_RNvMCsj6gjteTz5uu_1bNtB2_7Counter4bump", "<b::Counter>::bump" },
	{ "_RNvXs_Cs2OpA4fNwd7R_1rNtB4_7CounterNtNtCsgEmfK2I1SDS_4core3fmt7Display3fmt",
	  "<r::Counter as core::fmt::Display>::fmt" },
	{ "_RNvXs_Csj6gjteTz5uu_1bINtB4_3JobhENtB4_4Work3runB4_", "<b::Job<u8> as b::Work>::run" },
	{ "_RINvCsj6gjteTz5uu_1b11generic_summEB2_", "b::generic_sum::<u32>" },
	/* The standard library's, as a tokio program's stacks show them; a closure; fn types. */
	{ "_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync7condvar5futexNtB2_7Condvar4wait",
	  "<std::sys::sync::condvar::futex::Condvar>::wait" },
	{ "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Csj6gjteTz5uu_1b",
	  "std::rt::lang_start::<()>::{closure#0}" },
	{ "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace28___rust_begin_short_backtraceFEuuECsj6gjteTz5u"
	  "u_1b",
	  "std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>" },
	{ "_RNvNtNtCsgEmfK2I1SDS_4core9panicking11panic_const24panic_const_add_overflow",
	  "core::panicking::panic_const::panic_const_add_overflow" },
};

static const char *const not_mangled[] = {
	"malloc_trim",
	"_start",
	"__libc_start_main",
	"_Z",
	"_Zfoo",
	"",
	"_R",
	/* A v0 name cut short. */
	"_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync7condvar5fut",
};

int main(void)
{
	struct demangler *d = demangler__new();
	const char *first;
	static char many[2000][32];
	char copy[64];

	CHECK(d, "demangler__new");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = demangle(cases[i].mangled);

		CHECK(got && !strcmp(got, cases[i].want), "%s: %s, expected %s", cases[i].mangled,
		      got, cases[i].want);
		free(got);
		CHECK(!strcmp(demangler__name(d, cases[i].mangled), cases[i].want), "%s",
		      cases[i].mangled);
	}
	for (size_t i = 0; i < sizeof(not_mangled) / sizeof(not_mangled[0]); i++) {
		CHECK(!demangle(not_mangled[i]), "%s demangled", not_mangled[i]);
		CHECK(demangler__name(d, not_mangled[i]) == not_mangled[i], "%s", not_mangled[i]);
	}
	CHECK(!demangle(NULL), "NULL");
	CHECK(!demangler__name(d, NULL), "NULL");

	/* The cache: the same address, the same string; another address, demangled anew. */
	first = demangler__name(d, cases[1].mangled);
	CHECK(demangler__name(d, cases[1].mangled) == first, "cached");
	snprintf(copy, sizeof(copy), "%s", cases[1].mangled);
	CHECK(demangler__name(d, copy) != first && !strcmp(demangler__name(d, copy), first), "");
	/* Past the first table's 512 names: it grows, earlier answers stay. */
	for (int i = 0; i < 2000; i++) {
		/* Kept by address: names outlive the demangler, as a symbol table's do. */
		snprintf(many[i], sizeof(many[i]), "_Z%dfn%dv",
			 i < 10	  ? 3 :
			 i < 100  ? 4 :
			 i < 1000 ? 5 :
				    6,
			 i);
		CHECK(!strncmp(demangler__name(d, many[i]), "fn", 2), "%s", many[i]);
	}
	CHECK(demangler__name(d, cases[1].mangled) == first, "after growing");
	/* Every name starting "_Z" or "_R" is kept, the malformed four as themselves. */
	CHECK_EQ_U64(d->n, sizeof(cases) / sizeof(cases[0]) + 4 + 1 + 2000);
	demangler__free(d);
	TEST_PASS();
}
