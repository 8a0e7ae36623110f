/*
 * Prints the CPython layouts runtimes/python/python_layouts.c hard-codes
 * (3.11, 3.12), as the compiler lays them out from the interpreter's own
 * headers.  Not built by make.  With a CPython source tree at SRC on which
 * ./configure has run (it writes pyconfig.h):
 *   cc -DPy_BUILD_CORE -I$SRC/Include -I$SRC/Include/internal -I$SRC \
 *      scripts/python_offsets.c -o /tmp/python_offsets && /tmp/python_offsets
 * or, for an installed interpreter (include/python3.X has internal/):
 *   cc -DPy_BUILD_CORE -I$INC -I$INC/internal scripts/python_offsets.c ...
 */
#include "Python.h"
#include "pycore_runtime.h"
#include "pycore_interp.h"
#include "pycore_frame.h"
#include "pycore_code.h"
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#define P(what, v) printf("%-44s 0x%zx (%zu)\n", what, (size_t)(v), (size_t)(v))

int main(void)
{
	printf("PY_VERSION %s\n", PY_VERSION);
	P("sizeof(_PyRuntimeState)", sizeof(_PyRuntimeState));
	P("_PyRuntimeState.interpreters.head", offsetof(_PyRuntimeState, interpreters.head));
	P("sizeof(PyInterpreterState)", sizeof(PyInterpreterState));
	P("PyInterpreterState.threads.head", offsetof(PyInterpreterState, threads.head));
	P("sizeof(PyThreadState)", sizeof(PyThreadState));
	P("PyThreadState.next", offsetof(PyThreadState, next));
	P("PyThreadState.thread_id", offsetof(PyThreadState, thread_id));
	P("PyThreadState.cframe", offsetof(PyThreadState, cframe));
	P("sizeof(_PyCFrame)", sizeof(_PyCFrame));
	P("_PyCFrame.current_frame", offsetof(_PyCFrame, current_frame));
	P("sizeof(_PyInterpreterFrame)", sizeof(_PyInterpreterFrame));
	P("_PyInterpreterFrame.f_code", offsetof(_PyInterpreterFrame, f_code));
	P("_PyInterpreterFrame.previous", offsetof(_PyInterpreterFrame, previous));
	P("_PyInterpreterFrame.prev_instr", offsetof(_PyInterpreterFrame, prev_instr));
#if PY_MINOR_VERSION == 11
	P("_PyInterpreterFrame.is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
	P("_PyInterpreterFrame.owner", offsetof(_PyInterpreterFrame, owner));
	P("FRAME_OWNED_BY_GENERATOR", FRAME_OWNED_BY_GENERATOR);
	P("FRAME_OWNED_BY_FRAME_OBJECT", FRAME_OWNED_BY_FRAME_OBJECT);
#if PY_MINOR_VERSION >= 12
	P("FRAME_OWNED_BY_CSTACK", FRAME_OWNED_BY_CSTACK);
#endif
	P("sizeof(PyCodeObject)", sizeof(PyCodeObject));
	P("PyCodeObject.co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
	P("PyCodeObject.co_filename", offsetof(PyCodeObject, co_filename));
	P("PyCodeObject.co_qualname", offsetof(PyCodeObject, co_qualname));
	P("PyCodeObject.co_linetable", offsetof(PyCodeObject, co_linetable));
	P("PyCodeObject.co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("sizeof(_Py_CODEUNIT)", sizeof(_Py_CODEUNIT));
	P("PyASCIIObject.length", offsetof(PyASCIIObject, length));
	P("PyASCIIObject.state", offsetof(PyASCIIObject, state));
	P("sizeof(PyASCIIObject)", sizeof(PyASCIIObject));
	P("sizeof(PyCompactUnicodeObject)", sizeof(PyCompactUnicodeObject));
	P("PyBytesObject.ob_size", offsetof(PyBytesObject, ob_base.ob_size));
	P("PyBytesObject.ob_sval", offsetof(PyBytesObject, ob_sval));
	{
		/* the state bits read_str decodes: kind 2..4, compact 5, ascii 6 */
		PyASCIIObject o;
		unsigned int w = 0;
		memset(&o, 0, sizeof(o));
		o.state.kind = 7;
		memcpy(&w, &o.state, sizeof(w));
		P("state mask of kind", w);
		memset(&o, 0, sizeof(o));
		o.state.compact = 1;
		memcpy(&w, &o.state, sizeof(w));
		P("state mask of compact", w);
		memset(&o, 0, sizeof(o));
		o.state.ascii = 1;
		memcpy(&w, &o.state, sizeof(w));
		P("state mask of ascii", w);
	}
	return 0;
}
