// SPDX-License-Identifier: GPL-2.0
/* What a gap owns, freed in one place: see gap.h. */
#include <stdlib.h>

#include "gap.h"

void gap__free_walk(struct gap *g)
{
	for (__u32 r = 0; r < g->nroots; r++)
		free(g->roots[r].parts);
	/* roots[0]'s links are the gap's chain: freed with it. */
	for (__u32 r = 1; r < g->nroots; r++) {
		for (__u32 k = 0; k < g->roots[r].nlinks; k++)
			free(g->roots[r].links[k].frames);
		free(g->roots[r].links);
	}
	free(g->roots);
	g->roots = NULL;
	g->nroots = 0;
	for (__u32 i = 0; i < g->nstacks; i++)
		free(g->stacks[i].frames);
	free(g->stacks);
	g->stacks = NULL;
	g->nstacks = 0;
}

void gap__free_parts(struct gap *g)
{
	gap__free_walk(g);
	for (__u32 k = 0; k < g->nchain; k++)
		free(g->chain[k].frames);
	free(g->chain);
	g->chain = NULL;
	g->nchain = 0;
	free(g->kinds);
	g->kinds = NULL;
	g->nkinds = 0;
}
