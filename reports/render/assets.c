// SPDX-License-Identifier: GPL-2.0
/*
 * Embeds the files of reports/assets (see assets.h). The assembler reads the files, with paths relative to
 * the top of the source tree where make runs; reports/render/assets.mk makes this object depend on
 * them, since the compiler's dependency files do not see .incbin.
 */
#define ASSET(sym, file)                         \
	".pushsection .rodata." #sym ", \"a\"\n" \
	".globl " #sym "\n"                      \
	".hidden " #sym "\n"                     \
	".type " #sym ", @object\n" #sym ":\n"   \
	".incbin \"" file "\"\n"                 \
	".byte 0\n"                              \
	".size " #sym ", . - " #sym "\n"         \
	".popsection\n"

__asm__(ASSET(gs_asset_flame_js, "reports/render/assets/flame.js")
		ASSET(gs_asset_util_js, "reports/render/assets/util.js")
			ASSET(gs_asset_timeline_js, "reports/render/assets/timeline.js")
				ASSET(gs_asset_report_js, "reports/render/assets/report.js")
					ASSET(gs_asset_report_css,
					      "reports/render/assets/report.css"));
