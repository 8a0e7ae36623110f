// SPDX-License-Identifier: GPL-2.0
/* A program that carries the ELF note of the USDT probe
 * python:function__entry, as a CPython built --with-dtrace does (written
 * by hand: no sys/sdt.h needed).  A seed of the ELF fuzz harness, and the
 * shape runtimes/python/python_trace.c looks for. */
__asm__(".pushsection .note.stapsdt,\"\",\"note\"\n"
	".balign 4\n"
	".4byte 992f-991f, 994f-993f, 3\n"
	"991: .asciz \"stapsdt\"\n"
	"992: .balign 4\n"
	"993: .8byte 0, 0, 0\n"
	".asciz \"python\"\n"
	".asciz \"function__entry\"\n"
	".asciz \"8@%rbp 8@%r12 -4@%eax\"\n"
	"994: .balign 4\n"
	".popsection\n");

int main(void)
{
	return 0;
}
