# Helpers of t/plan.bats.

# random_graphs N SEED: N random job graphs (one a line): up to 8 vertices of
# parallelism 1-24 or 60-140, random DAG edges (either distribution, some
# doubled), random finished subtasks, and now and then a subtask neither
# RUNNING nor FINISHED.
random_graphs() {
	awk -v n="$1" -v seed="$2" '
	function par() { return rand() < 0.8 ? 1 + int(rand() * 24) : 60 + int(rand() * 81) }
	function vertex(v,    p, frac, i, sep, s) {
		p = par(); P[v] = p
		frac = int(rand() * 4) / 3
		s = sprintf("{\"id\":\"v%d\",\"parallelism\":%d", v, p)
		if (rand() < 0.05) {
			s = s ",\"tasks\":["
			for (i = 0; i < p; i++)
				s = s (i ? "," : "") (rand() < 0.1 ? "\"DEPLOYING\"" : rand() < frac ? "\"FINISHED\"" : "\"RUNNING\"")
			return s "]}"
		}
		s = s ",\"finished\":["
		sep = ""
		for (i = 0; i < p; i++)
			if (rand() < frac) { s = s sep i; sep = "," }
		return s "]}"
	}
	BEGIN {
		srand(seed)
		for (g = 0; g < n; g++) {
			nv = 1 + int(rand() * 8)
			line = "{\"vertices\":["
			for (v = 0; v < nv; v++)
				line = line (v ? "," : "") vertex(v)
			line = line "],\"edges\":["
			sep = ""
			for (j = 1; j < nv; j++)
				for (i = 0; i < j; i++) {
					if (rand() >= 0.4)
						continue
					copies = rand() < 0.1 ? 2 : 1
					for (c = 0; c < copies; c++) {
						d = rand() < 0.5 ? "pointwise" : "all_to_all"
						line = line sep sprintf("{\"source\":\"v%d\",\"target\":\"v%d\",\"distribution\":\"%s\"}", i, j, d)
						sep = ","
					}
				}
			print line "]}"
		}
	}'
}
