/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Demangled C++ and Rust names made short for text outputs (summary.txt, the report on stdout),
 * where a template instance took a whole line: template arguments become "<...>" and parameter
 * lists "(...)" ("()" where there are none), lambdas' included, so
 *   at::native::fill_kernel<at::native::FillFunctor<float> >(at::TensorIterator&)::{lambda()#1}
 * reads at::native::fill_kernel<...>(...)::{lambda()#1}. Qualified paths keep their brackets
 * ("<b::Job<...> as b::Work>::run"), operators their characters ("std::operator<< <...>(...)"),
 * "(anonymous namespace)" and names that are not C++ or Rust ("train (train.py:42)") stay.
 * JSON, tooltips and folded stacks keep the whole name.
 */
#ifndef GAPSCOPE_SHORTNAME_H
#define GAPSCOPE_SHORTNAME_H

#include <stddef.h>

#define SHORTNAME_MAX 512

/* name shortened into buf (size bytes, cut short if need be); buf, or name when NULL. */
const char *shortname(const char *name, char *buf, size_t size);

#endif
