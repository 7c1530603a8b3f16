# Helpers of t/failover.bats: one-line summaries of ckpt-plan -r and -f output.

# "a:0-1,b:0-1 c:0": regions separated by spaces, their subtask sets by commas.
regions() {
	ckpt-plan -r "$@" | jq -r '[.regions[] | [.[] | .vertex + ":" + .subtasks] | join(",")] | join(" ")'
}

# "v1:0,v4:0 (2 regions)": the restart set and the number of regions in it.
restart() {
	ckpt-plan "$@" | jq -r '([.restart[] | .vertex + ":" + .subtasks] | join(",")) + " (\(.regions) regions)"'
}
