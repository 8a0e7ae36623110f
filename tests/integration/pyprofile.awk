# Reads a ground-truth file of tests/workloads/pyshares.py (NAME SHARE
# FIRST LAST) and `collector dump` of a pprof profile; prints:
#   samples N           every sample
#   with_python N       samples with a frame of a .py file
#   share NAME TRUE GOT samples under NAME (anywhere in the stack) among
#                       those under any of alpha, beta, gamma, in percent
#   bad_lines N         frames of a truth function whose line is outside
#                       it (its def line, where each call's RESUME is, to
#                       its last line)
#   callback N          samples with key_of called from gamma through at
#                       least one native frame (list.sort), and no frame of
#                       a Python pseudo-file (3.12's <shim> entry frames,
#                       which a walker that took them for Python frames
#                       would show in place of the native ones)
#   shim_frames N       frames of the evaluator's entry frames (3.12+:
#                       "<interpreter trampoline>" of file <shim>), which
#                       are no Python code: 0 when the walk skips them
# Usage: awk -f pyprofile.awk TRUTH DUMP
FNR == NR { share[$1] = $2; first[$1] = $3; last[$1] = $4; next }
function finish(   f, k) {
	if (!count)
		return
	samples += count
	if (py)
		with_python += count
	for (f in under)
		got[f] += count
	if (under["alpha"] || under["beta"] || under["gamma"])
		measured += count
	if (cb)
		callback += count
	delete under
	count = py = cb = 0
	key_at = -1
}
/^sample / { finish(); count = $2; depth = 0; key_at = -1; native_since_key = 0; next }
/^    #/ && count {
	name = $3
	where = $NF
	is_py = where ~ /\.py:[0-9]+$/
	if (is_py)
		py = 1
	# <frozen ...>, <string>, <shim>: Python code too
	is_code = is_py || where ~ /^</
	if (where ~ /^<shim>:/)
		shim_frames += count
	if (name in share) {
		under[name] = 1
		line = where
		sub(/.*:/, "", line)
		if (line + 0 < first[name] || line + 0 > last[name]) {
			bad_lines++
			if (bad_lines <= 5)
				print "bad line: " name " " where > "/dev/stderr"
		}
	}
	if (name == "key_of") {
		key_at = depth
		native_since_key = 0
	} else if (key_at >= 0 && !is_code) {
		native_since_key++
	} else if (key_at >= 0 && is_code) {
		# the first Python frame above key_of: its caller
		if (name == "gamma" && native_since_key > 0)
			cb = 1
		key_at = -1
	}
	depth++
}
END {
	finish()
	print "samples " samples + 0
	print "with_python " with_python + 0
	for (f in share)
		if (f != "key_of")
			printf "share %s %.1f %.1f\n", f, 100 * share[f],
			       measured ? 100 * got[f] / measured : 0
	print "bad_lines " bad_lines + 0
	print "callback " callback + 0
	print "shim_frames " shim_frames + 0
}
