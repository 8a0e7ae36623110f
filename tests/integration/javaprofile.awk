# Reads the ground truth of tests/workloads/JavaShares.java (NAME SHARE
# lines, "Shares.alpha 49.88"), the marker lines of tests/workloads/
# Shares.java (MARKER LINE: "alpha 45"), then `collector dump` of a pprof
# profile of it; prints, of the main Java thread's samples (the thread
# whose samples hold JavaShares.main the most):
#   samples N          its samples
#   whole N            ... whose outermost frame is the thread's start
#                      (clone3; in a libc without symbols, the libc frame
#                      there): the walk went through every Java frame
#   share NAME TRUE GOT samples under Shares.NAME (anywhere in the stack)
#                      among those under any of alpha, beta, gamma, in
#                      percent, beside the workload's own measure
#   alpha N            samples under alpha
#   inlined N          ... with mixRow inlined into alpha (a location whose
#                      function is alpha with mixRow's inlined call)
#   mixrow N           ... with mixRow over alpha, inlined or called (alpha
#                      interpreted, before the JIT compiled it)
#   bad_lines N        frames of alpha, mixRow, beta, gamma at another
#                      line than their marker's
# and of every thread:
#   thread NAME METHOD N  samples of thread NAME with METHOD in the stack,
#                      for METHOD omega, waitForever, sleepForever, delta
#   unnamed N          frames of the [java] image left unnamed
# Usage: awk -f javaprofile.awk TRUTH MARKERS DUMP
FILENAME == ARGV[1] { truth[$1] = $2; next }
FILENAME == ARGV[2] { marker[$1] = $2; next }
function method(s) {
	# "long Shares.alpha(long[], int) Shares.java:45" -> "alpha"
	if (match(s, /Shares\.[A-Za-z]+\(/))
		return substr(s, RSTART + 7, RLENGTH - 8)
	if (s ~ /JavaShares\.main\(/)
		return "main"
	return ""
}
function line_of(s,   n, a) {
	n = split(s, a, ":")
	return a[n] + 0
}
function finish(   i, m, u, any) {
	if (!count)
		return
	delete under
	for (i = 1; i <= nf; i++) {
		m = method(frame[i])
		if (m != "")
			under[m] = 1
		if ((m == "alpha" || m == "mixRow" || m == "beta" || m == "gamma") &&
		    line_of(frame[i]) != marker[tolower(m)])
			bad_lines += count
	}
	outer = nf ? frame[nf] : ""
	key = tid
	tsamples[key] += count
	if ("main" in under)
		tmain[key] += count
	if (outer ~ /clone3?( |$)/ || outer ~ /^libc\.so\.6\+0x/)
		twhole[key] += count
	if ("alpha" in under) {
		talpha[key] += count
		if (inl)
			tinl[key] += count
		if ("mixRow" in under)
			tmixrow[key] += count
	}
	any = 0
	for (u in under)
		if (u == "alpha" || u == "beta" || u == "gamma") {
			tunder[key, u] += count
			any = 1
		}
	if (any)
		tany[key] += count
	for (u in under)
		if (u == "omega" || u == "waitForever" || u == "sleepForever" || u == "delta")
			thread[tname " " u] += count
	count = nf = inl = 0
}
/^sample / {
	finish()
	count = $2
	tid = tname = ""
	for (i = 3; i <= NF; i++) {
		if ($i ~ /^tid=/)
			tid = substr($i, 5)
		if ($i ~ /^thread_name=/)
			tname = substr($i, 13)
	}
	next
}
/^    #/ && count {
	s = $0
	sub(/^ +#[0-9]+ 0x[0-9a-f]+ /, "", s)
	frame[++nf] = s
	if (s ~ /\[java\]\+0x/ || s ~ /^\[unknown\] \[java\]/)
		unnamed += count
	next
}
/^        inlined into / && count {
	s = $0
	sub(/^ +inlined into /, "", s)
	if (method(frame[nf]) == "mixRow" && method(s) == "alpha")
		inl = 1
	frame[++nf] = s
	next
}
END {
	finish()
	best = ""
	for (k in tmain)
		if (best == "" || tmain[k] > tmain[best])
			best = k
	printf "samples %d\n", tsamples[best]
	printf "whole %d\n", twhole[best]
	split("alpha beta gamma", names, " ")
	for (i = 1; i <= 3; i++)
		printf "share %s %s %.1f\n", names[i], truth["Shares." names[i]],
		       tany[best] ? 100 * tunder[best, names[i]] / tany[best] : 0
	printf "alpha %d\n", talpha[best]
	printf "inlined %d\n", tinl[best]
	printf "mixrow %d\n", tmixrow[best]
	printf "bad_lines %d\n", bad_lines
	printf "unnamed %d\n", unnamed
	for (k in thread)
		printf "thread %s %d\n", k, thread[k]
}
