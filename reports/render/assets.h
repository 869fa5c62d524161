/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page assets under reports/render/assets/, embedded into the binary at build time (assets.c),
 * each NUL-terminated, so a report written anywhere needs no file of the source tree.
 */
#ifndef GAPSCOPE_ASSETS_H
#define GAPSCOPE_ASSETS_H

extern const char gs_asset_flame_js[];	  /* flame graph zoom, search, details */
extern const char gs_asset_util_js[];	  /* index.html: formatting and DOM helpers */
extern const char gs_asset_timeline_js[]; /* index.html: the GPU timeline */
extern const char gs_asset_report_js[];	  /* index.html: the page, gap panel, tables */
extern const char gs_asset_report_css[];

#endif /* GAPSCOPE_ASSETS_H */
