// SPDX-License-Identifier: GPL-2.0
/* DWARF scopes at an address (dwscopes.h). */
#include <dwarf.h>

#include "demangle.h"
#include "dwscopes.h"

const char *dwscopes__call_site(Dwarf_Die *cu, Dwarf_Die *inl, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word fileno, l;
	size_t nfiles;

	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &fileno) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || fileno >= nfiles)
		return NULL;
	if (!dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &l))
		*line = (int)l;
	return dwarf_filesrc(files, fileno, NULL, NULL);
}

/*
 * Below parent, the scopes that hold pc, outermost first. dwarf_getscopes() visits every scope of
 * the CU, ten times the cost of the rest of a lookup; this descends only into those holding pc.
 * The file is the target's to write: namespaces and classes nest as deep as it likes, so the
 * descent is bounded (nest levels in all, scopes or not); deeper, pc has no scope here and is
 * named by the symbol table.
 */
#define DWSCOPES_MAX_NEST 256

static int scopes_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int max, int nest)
{
	Dwarf_Die die;

	if (max <= 0 || nest <= 0 || dwarf_child(parent, &die))
		return 0;
	do {
		int tag = dwarf_tag(&die), n;

		if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		    tag == DW_TAG_structure_type) {
			n = scopes_at(&die, pc, out, max, nest - 1);
			if (n)
				return n;
		} else if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			    tag == DW_TAG_lexical_block) &&
			   dwarf_haspc(&die, pc) == 1) {
			out[0] = die;
			return 1 + scopes_at(&out[0], pc, out + 1, max - 1, nest - 1);
		}
	} while (!dwarf_siblingof(&die, &die));
	return 0;
}

int dwscopes__at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out, int max)
{
	return scopes_at(parent, pc, out, max, DWSCOPES_MAX_NEST);
}

const char *dwscopes__name(Dwarf_Die *die, struct demangler *d)
{
	Dwarf_Attribute a;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (linkage)
		return demangler__name(d, linkage);
	return dwarf_diename(die);
}
