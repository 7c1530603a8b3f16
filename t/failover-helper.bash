# Helpers of t/failover.bats: one-line summaries of ckpt-plan --regions and -f output
# (in bash alone: a process less per call).

# '{"vertex":"a","subtasks":"0-1"},{"vertex":"b",...' -> 'a:0-1,b:...'
_sets() {
	local s=${1//\{\"vertex\":\"/}
	s=${s//\",\"subtasks\":\"/:}
	printf '%s' "${s//\"\}/}"
}

# "a:0-1,b:0-1 c:0" from one line of ckpt-plan --regions: regions separated by spaces, their sets by commas.
regions_line() {
	local out=${1#*\"regions\":\[\[}
	out=${out%\]\]\}}
	_sets "${out//\],\[/ }"
	echo
}

# "v1:0,v4:0 (2 regions)" from one line of ckpt-plan -f: the restart set and its number of regions.
restart_line() {
	local r=${1#*\"restart\":\[} n=${1##*\"regions\":}
	echo "$(_sets "${r%%\],\"regions\"*}") (${n%\}} regions)"
}

regions() {
	local out
	out=$(ckpt-plan --regions "$@") || return
	regions_line "$out"
}

restart() {
	local out
	out=$(ckpt-plan "$@") || return
	restart_line "$out"
}

# restarts_are GRAPH: each line of stdin, "ARGS = SETS (N regions)", is what restart ARGS GRAPH
# says; every line that differs is shown, and fails the test.
restarts_are() {
	local args want got fail=0
	while read -r args; do
		want=${args#* = } args=${args%% = *}
		# shellcheck disable=SC2086 # ARGS are words
		got=$(restart $args "$1")
		[ "$got" = "$want" ] || { echo "restart $args: $got, not $want"; fail=1; }
	done
	return $fail
}

# random_failover N SEED MODE: N random graphs (at least 3 vertices, edges of
# every partition type, either distribution) on stdout, one a line; and on fd 3
# the regions and restart sets that a plain, independent model computes for
# each: with every subtask-to-subtask connection listed, pipelined connections
# joined, mutually reachable regions merged, then Flink's breadth-first walk.
# MODE: "regions" (regions summary), or "STRATEGY FAILED LOST" such as
# "region v1:0 v0:0" (restart summary; LOST may be "-").
random_failover() {
	awk -v n="$1" -v seed="$2" -v mode="$3" '
	function find(x) { while (par[x] != x) x = par[x]; return x }
	function join(a, b) { a = find(a); b = find(b); if (a != b) par[a] = b }
	function sub_of(name,    parts, v) {   # "v1:0" -> global subtask
		split(name, parts, ":"); v = substr(parts[1], 2) + 0
		return base[v] + parts[2]
	}
	function ranges(list, cnt,    s, i, j) {   # ascending subtask indices -> "0-2,5"
		s = ""
		for (i = 1; i <= cnt; i = j + 1) {
			for (j = i; j < cnt && list[j + 1] == list[j] + 1; j++)
				;
			s = s (s == "" ? "" : ",") list[i] (j > i ? "-" list[j] : "")
		}
		return s
	}
	# the members of the marked set as "v0:0-1,v2:3"
	function summary(mark,    s, v, k, cnt, lst) {
		s = ""
		for (v = 0; v < nv; v++) {
			cnt = 0
			for (k = 0; k < P[v]; k++)
				if ((base[v] + k) in mark) lst[++cnt] = k
			if (cnt)
				s = s (s == "" ? "" : ",") "v" v ":" ranges(lst, cnt)
		}
		return s
	}
	function graph(g,    v, i, j, e, sep, line, parts, d, p, a, b, c, k, q, S, T, lo, hi, r, nr, x, y) {
		nv = 3 + int(rand() * 4); N = 0; ne = 0; nc = 0
		line = "{\"vertices\":["
		for (v = 0; v < nv; v++) {
			P[v] = 1 + int(rand() * 5); base[v] = N; N += P[v]
			line = line (v ? "," : "") "{\"id\":\"v" v "\",\"parallelism\":" P[v] "}"
		}
		line = line "],\"edges\":["
		sep = ""
		for (j = 1; j < nv; j++)
			for (i = 0; i < j; i++) {
				if (rand() >= 0.45)
					continue
				d = rand() < 0.5 ? "pointwise" : "all_to_all"
				p = KIND[1 + int(rand() * 6)]
				line = line sep "{\"source\":\"v" i "\",\"target\":\"v" j "\",\"distribution\":\"" d "\",\"partition\":\"" p "\"}"
				sep = ","
				S = P[i]; T = P[j]
				for (b = 0; b < T; b++) {
					if (d == "all_to_all") { lo = 0; hi = S }
					else if (S >= T) { lo = int(b * S / T); hi = int((b + 1) * S / T) }
					else { lo = int(b * S / T); hi = lo + 1 }
					for (a = lo; a < hi; a++) { nc++; CP[nc] = base[i] + a; CC[nc] = base[j] + b; CK[nc] = p }
				}
			}
		print line "]}"
		# regions
		delete par
		for (x = 0; x < N; x++) par[x] = x
		if (strategy != "approximate" && strategy != "full")
			for (c = 1; c <= nc; c++)
				if (CK[c] == "pipelined" || CK[c] == "pipelined_bounded")
					join(CP[c], CC[c])
		if (strategy == "full")
			for (x = 1; x < N; x++) join(0, x)
		delete reach
		for (c = 1; c <= nc; c++) {
			x = find(CP[c]); y = find(CC[c])
			if (x != y) reach[x, y] = 1
		}
		for (k = 0; k < N; k++) for (x = 0; x < N; x++) if ((x, k) in reach) for (y = 0; y < N; y++)
			if ((k, y) in reach) reach[x, y] = 1
		for (x = 0; x < N; x++) for (y = 0; y < N; y++)
			if (find(x) != find(y) && ((find(x), find(y)) in reach) && ((find(y), find(x)) in reach))
				join(x, y)
		if (mode == "regions") {
			s = ""
			delete done
			for (x = 0; x < N; x++) {
				r = find(x)
				if (r in done) continue
				done[r] = 1
				delete mark
				for (y = 0; y < N; y++) if (find(y) == r) mark[y] = 1
				s = s (s == "" ? "" : " ") summary(mark)
			}
			print s > "/dev/fd/3"
			return
		}
		# restart: breadth-first over regions
		delete mark; delete seen; delete lost
		if (lostname != "-") lost[sub_of(lostname)] = 1
		qh = 1; qt = 0
		r = find(sub_of(failed)); seen[r] = 1; Q[++qt] = r
		while (qh <= qt) {
			r = Q[qh++]
			for (x = 0; x < N; x++) {
				if (find(x) != r) continue
				mark[x] = 1
				for (c = 1; c <= nc; c++) {
					if (CP[c] == x && !(find(CC[c]) in seen)) { seen[find(CC[c])] = 1; Q[++qt] = find(CC[c]) }
					if (CC[c] == x) {
						avail = (strategy == "approximate" || CK[c] == "blocking" || CK[c] == "hybrid_full" || CK[c] == "pipelined_approximate") && !(CP[c] in lost)
						if (!avail && !(find(CP[c]) in seen)) { seen[find(CP[c])] = 1; Q[++qt] = find(CP[c]) }
					}
				}
			}
		}
		print summary(mark) " (" qt " regions)" > "/dev/fd/3"
	}
	BEGIN {
		srand(seed)
		split("pipelined pipelined_bounded blocking hybrid_full hybrid_selective pipelined_approximate", KIND, " ")
		if (mode == "regions") strategy = "region"
		else { split(mode, m, " "); strategy = m[1]; failed = m[2]; lostname = m[3] }
		for (g = 0; g < n; g++)
			graph(g)
	}'
}
