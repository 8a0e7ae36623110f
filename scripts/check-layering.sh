#!/bin/sh
# The folders of collector are layers: a file includes only from its own
# folder and the folders below it, and only loader/ sees libbpf and the BPF
# skeletons.  Data flows bpf -> loader -> decode -> model -> formats; the
# includes run the other way round:
#
#   lib      one hash table, /proc readers, byte and allocation helpers
#   model    the run's model (lib)
#   symbols  ELF, symbolizer, kallsyms, /proc maps, CFI reading (model, lib)
#   unwind   CFI reduced to rules, the BPF unwinder's tables (which image
#            gets one, when, their cache on disk; the maps only through an
#            interface, unwind/unwind_maps.h, that loader/ implements) and
#            the user-space unwinder (bpf's ABI header, symbols, model, lib)
#   formats  one folder per format, and their registry (symbols, model, lib)
#   transport encoded bodies delivered over the network (OTLP/HTTP), spooled
#            on disk while the backend is down; bytes only (lib)
#   runtimes one folder per language runtime behind one interface and its
#            registry (runtimes/runtime.h); the BPF map writes behind an
#            interface loader/ implements; their statistics and summary from
#            the model (bpf's ABI header, symbols, model, lib)
#   decode   ring records into the model (bpf's ABI header, unwind, runtimes,
#            symbols, model, lib)
#   loader   the only libbpf user (bpf's ABI header, the unwind maps'
#            interface it implements, lib)
#   session  one run: its checks, its steps in order, its intervals and push
#            (everything below)
#   cli      main, the options' parsing, the status line, the summary,
#            collector stacks' listing, dump (everything)
#
# Usage: check-layering.sh [DIR]   (default: the tree this script is in)
# Prints each violation as FILE:LINE: what is wrong; exit 1 if any.
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2

allowed() {
	case $1 in
	lib) echo "lib" ;;
	model) echo "lib model" ;;
	symbols) echo "lib model symbols" ;;
	unwind) echo "lib bpf model symbols unwind" ;;
	formats) echo "lib model symbols formats" ;;
	transport) echo "lib transport" ;;
	runtimes) echo "lib bpf model symbols runtimes" ;;
	decode) echo "lib bpf model symbols unwind runtimes decode" ;;
	loader) echo "lib bpf unwind loader" ;;
	session) echo "lib bpf model symbols unwind formats transport runtimes decode loader session" ;;
	cli) echo "lib bpf model symbols unwind formats transport runtimes decode loader session cli" ;;
	esac
}

bad=0
for layer in lib model symbols unwind formats transport runtimes decode loader session cli; do
	[ -d "$layer" ] || continue
	ok=$(allowed "$layer")
	# one awk for the layer's files: one a file was most of the check's time
	files=$(find "$layer" -name '*.[ch]' | sort)
	[ -n "$files" ] || continue
	# quoted includes must be spelled with their folder
	out=$(awk -v ok=" $ok " -v layer="$layer" '
		/^[ \t]*#[ \t]*include[ \t]*"/ {
			match($0, /"[^"]+"/)
			inc = substr($0, RSTART + 1, RLENGTH - 2)
			if (inc ~ /\.skel\.h$/) {
				if (layer != "loader")
					printf "%s:%d: includes the skeleton %s: only loader/ may\n", FILENAME, FNR, inc
				next
			}
			n = index(inc, "/")
			if (!n) {
				printf "%s:%d: \"%s\": spell includes with their folder (\"%s/%s\")\n", FILENAME, FNR, inc, layer, inc
				next
			}
			dir = substr(inc, 1, n - 1)
			if (index(ok, " " dir " ") == 0)
				printf "%s:%d: %s/ includes %s: %s/ may include only from%s\n", FILENAME, FNR, layer, inc, layer, ok
		}
		/^[ \t]*#[ \t]*include[ \t]*<bpf\// {
			if (layer != "loader")
				printf "%s:%d: includes libbpf (%s): only loader/ may\n", FILENAME, FNR, $0
		}' $files)
	if [ -n "$out" ]; then
		echo "$out"
		bad=1
	fi
done
# every object goes into one archive, which keeps members by base name:
# two sources of one name would replace each other there
dups=$(find lib model symbols unwind formats transport runtimes decode loader session cli -name '*.c' 2>/dev/null |
	sed 's|.*/||' | sort | uniq -d)
for d in $dups; do
	echo "$(find lib model symbols unwind formats transport runtimes decode loader session cli -name "$d" | tr '\n' ' '): one base name for two sources (the archive keeps one)"
	bad=1
done
exit $bad
