/* SPDX-License-Identifier: GPL-2.0 */
/* Whether an ELF file's code was built with frame pointers. */
#ifndef COLLECTOR_FRAMEPOINTERS_H
#define COLLECTOR_FRAMEPOINTERS_H

/*
 * 1 when most of the file's functions start with the frame-pointer prologue
 * (push %rbp; mov %rsp,%rbp, after an optional endbr64), 0 when they do
 * not, or a negative errno when the file has no readable symbols or code.
 */
int elf_uses_frame_pointers(const char *path);

#endif /* COLLECTOR_FRAMEPOINTERS_H */
