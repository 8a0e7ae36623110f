// SPDX-License-Identifier: GPL-2.0
/*
 * Function names as people read them: C++ (Itanium ABI) and Rust (legacy
 * and v0) symbols demangled through libiberty, the GNU toolchain's own
 * demangler (the one binutils and gdb use), with the parameter list and
 * cv-qualifiers: "v8::base::ieee754::sin(double)" for
 * "_ZN2v84base7ieee7543sinEd".  Rust's legacy hash suffix is dropped as
 * rustfilt and perf drop it.  The linkage name stays in the model beside
 * the demangled one for the formats that keep both (pprof's system_name).
 */
#include "symbols/symbolize_internal.h"

#include <libiberty/demangle.h>

/* Only names that can be mangled are handed to the demangler: "_Z..."
 * (C++, and Rust legacy, which wraps it) and "_R..." (Rust v0). */
static bool maybe_mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

void symbolizer_set_demangle(struct symbolizer *s, bool demangle)
{
	s->no_demangle = !demangle;
}

void symbolizer_set_image_crc(struct symbolizer *s, bool crc)
{
	s->no_image_crc = !crc;
}

uint32_t symbolizer_function(struct symbolizer *s, uint32_t image, const char *name,
			     uint64_t entry, uint64_t size, uint32_t file, uint32_t line)
{
	char *demangled = NULL;
	uint32_t id;

	if (!s->no_demangle && maybe_mangled(name))
		demangled = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!demangled)
		return model_intern_function(s->m, image, name, entry, size, file, line);
	id = model_intern_function(s->m, image, demangled, entry, size, file, line);
	model_function_set_linkage(s->m, id, name);
	free(demangled);
	return id;
}
