/* SPDX-License-Identifier: MIT */
/* The nvcc-built fatbin of engine/kernels.cu, embedded as zk_fatbin[] for cuModuleLoadData.
 * The driver wants the image aligned; 64 bytes is more than any fatbin header needs. */
	.section .rodata.zk_fatbin, "a"
	.balign 64
	.globl zk_fatbin
	.type zk_fatbin, @object
zk_fatbin:
	.incbin ZK_FATBIN_PATH
	.size zk_fatbin, . - zk_fatbin
	.globl zk_fatbin_end
zk_fatbin_end:
	.section .note.GNU-stack, "", @progbits
